/** Each model's token-count calibration (engine/compaction/calibration.ts), one row per model. */
import type { Clock } from '../core/clock.js';
import type { Db } from './db.js';

/** Stored as JSON: the engine owns the shape; a row it cannot read is ignored. */
export class TokenCalibrationRepository<State> {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly isState: (value: unknown) => value is State,
  ) {}

  load(model: string): State | undefined {
    try {
      const row = this.db.prepare<[string], { state: string }>('SELECT state FROM token_calibration WHERE model = ?').get(model);
      const parsed: unknown = row ? JSON.parse(row.state) : undefined;
      return this.isState(parsed) ? parsed : undefined;
    } catch {
      return undefined; // a damaged row only means learning again
    }
  }

  save(model: string, state: State): void {
    try {
      this.db
        .prepare('INSERT INTO token_calibration (model, state, updated_at) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at')
        .run(model, JSON.stringify(state), this.clock.now());
    } catch {
      // The store is closing; what was learnt since the last save is learnt again.
    }
  }
}
