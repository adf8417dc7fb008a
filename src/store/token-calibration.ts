/**
 * Each model's token-count calibration (engine/compaction/calibration.ts) in the Store port,
 * one row per model. The engine owns the shape; the store keeps it as JSON.
 */
export interface TokenCalibrationRepository {
  /** The model's stored state, parsed; undefined when there is none or it cannot be read (a damaged row only means learning again). */
  load(model: string): unknown;
  /** Never throws: a store that is closing forgets what was learnt since the last save. */
  save(model: string, state: unknown): void;
}

/** The repository for one state type: a row `isState` rejects reads as absent. */
export function typedCalibrations<State>(repository: TokenCalibrationRepository, isState: (value: unknown) => value is State): { load(model: string): State | undefined; save(model: string, state: State): void } {
  return {
    load: (model) => {
      const value = repository.load(model);
      return isState(value) ? value : undefined;
    },
    save: (model, state) => repository.save(model, state),
  };
}
