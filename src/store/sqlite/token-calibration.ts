/** Token-count calibration on SQLite (the port: ../token-calibration.ts). */
import type { Clock } from '../../core/clock.js';
import type { TokenCalibrationRepository } from '../token-calibration.js';
import type { Db } from './db.js';

export class SqliteTokenCalibration implements TokenCalibrationRepository {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  load(model: string): unknown {
    try {
      const row = this.db.prepare<[string], { state: string }>('SELECT state FROM token_calibration WHERE model = ?').get(model);
      return row ? (JSON.parse(row.state) as unknown) : undefined;
    } catch {
      return undefined; // a damaged row only means learning again
    }
  }

  save(model: string, state: unknown): void {
    try {
      this.db
        .prepare('INSERT INTO token_calibration (model, state, updated_at) VALUES (?, ?, ?) ON CONFLICT(model) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at')
        .run(model, JSON.stringify(state), this.clock.now());
    } catch {
      // The store is closing; what was learnt since the last save is learnt again.
    }
  }
}
