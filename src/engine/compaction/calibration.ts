/**
 * What a model's own token counts say about hob's cheap estimates, learnt from every request's
 * reported usage and kept per model (in the store, when one is given), so a restart starts
 * from what the last run learnt. For each estimate (tokens.ts: `chars`, `pieces`) two scales:
 * `whole` for a prompt estimated from scratch (the first of a session), `marginal` for the
 * part added since a counted request, learnt from the differences between consecutive counts,
 * which is what most sizes rest on. Each estimate's recent error decides which one is used.
 */
import type { Estimate, EstimateKind } from './tokens.js';

type Sums = { reported: number; estimated: number };
type KindState = { whole: Sums; marginal: Sums; /** Decayed sum of relative errors of its predictions, weighted by tokens counted, and that weight. */ error: { sum: number; weight: number } };

export type CalibrationState = { chars: KindState; pieces: KindState; samples: number };

/** Where calibrations are kept between runs. Must not throw. */
export interface CalibrationStore {
  load(model: string): CalibrationState | undefined;
  save(model: string, state: CalibrationState): void;
}

const KINDS: readonly EstimateKind[] = ['pieces', 'chars'];
/** Older observations fade: a server or model update changes counts. */
const DECAY = 0.95;
/** A difference this small says more about rounding than about the scale. */
const MIN_DIFFERENCE = 24;
/** Ratios are kept within this range (a bad sample must not run away with them). */
const RANGE = { low: 0.3, high: 3 };
/** Tokens counted before `chars` may take over from `pieces` (hob's own prompt alone is over a thousand). */
const MIN_EVIDENCE = 500;
/** Saved every this many observations, and on flush. */
const SAVE_EVERY = 16;

const clampRatio = (value: number): number => Math.min(RANGE.high, Math.max(RANGE.low, value));
const emptyKind = (): KindState => ({ whole: { reported: 0, estimated: 0 }, marginal: { reported: 0, estimated: 0 }, error: { sum: 0, weight: 0 } });

export class ModelCalibration {
  private state: CalibrationState;
  private unsaved = 0;

  constructor(
    private readonly model: string,
    private readonly store?: CalibrationStore,
  ) {
    this.state = store?.load(model) ?? { chars: emptyKind(), pieces: emptyKind(), samples: 0 };
  }

  /** The estimate whose calibrated predictions have been closer to this model's counts (`pieces` until `chars` is clearly better). */
  best(): EstimateKind {
    const error = (kind: EstimateKind) => {
      const { sum, weight } = this.state[kind].error;
      return weight >= MIN_EVIDENCE ? sum / weight : Number.POSITIVE_INFINITY;
    };
    // `pieces` follows real tokenizers on most text; `chars` must be clearly closer to take over.
    return error('chars') < error('pieces') * 0.6 ? 'chars' : 'pieces';
  }

  /** Provider tokens per estimated token: for a whole prompt, and for a difference between prompts. */
  ratios(kind: EstimateKind): { whole: number; marginal: number } {
    const { whole, marginal } = this.state[kind];
    const wholeRatio = whole.estimated > 0 ? clampRatio(whole.reported / whole.estimated) : 1;
    // Until differences have been seen, the estimate is taken as it is: the whole prompt's scale
    // is mostly that of the fixed part (tool schemas), which says little about conversation text.
    const marginalRatio = marginal.estimated >= 4 * MIN_DIFFERENCE ? clampRatio(marginal.reported / marginal.estimated) : 1;
    return { whole: wholeRatio, marginal: marginalRatio };
  }

  /** One counted prompt, and the counted prompt it extends (same conversation, history only grew). */
  learn(counted: { tokens: number; estimate: Estimate }, previous?: { tokens: number; estimate: Estimate }): void {
    for (const kind of KINDS) {
      const state = this.state[kind];
      // How close this estimate would have come, before it learns from the answer (the first
      // time, unscaled: each estimate is built to match its kind of tokenizer as it is).
      const ratios = this.ratios(kind);
      const predicted = previous ? previous.tokens + (counted.estimate[kind] - previous.estimate[kind]) * ratios.marginal : counted.estimate[kind] * ratios.whole;
      // Weighted by the prompt's size: a tiny prompt is mostly framing and says little.
      state.error.sum = state.error.sum * DECAY + (Math.abs(predicted - counted.tokens) / counted.tokens) * counted.tokens;
      state.error.weight = state.error.weight * DECAY + counted.tokens;
      state.whole.reported = state.whole.reported * DECAY + counted.tokens;
      state.whole.estimated = state.whole.estimated * DECAY + counted.estimate[kind];
      const difference = previous ? counted.estimate[kind] - previous.estimate[kind] : 0;
      const reportedDifference = previous ? counted.tokens - previous.tokens : 0;
      if (previous && difference >= MIN_DIFFERENCE && reportedDifference > 0) {
        state.marginal.reported = state.marginal.reported * DECAY + reportedDifference;
        state.marginal.estimated = state.marginal.estimated * DECAY + difference;
      }
    }
    this.state.samples += 1;
    this.unsaved += 1;
    if (this.unsaved >= SAVE_EVERY) this.flush();
  }

  flush(): void {
    if (this.unsaved === 0) return;
    this.unsaved = 0;
    this.store?.save(this.model, this.state);
  }
}

/** Every model's calibration in one process, shared by its conversations. */
export class TokenCalibrations {
  private readonly models = new Map<string, ModelCalibration>();

  constructor(private readonly store?: CalibrationStore) {}

  for(model: string): ModelCalibration {
    let calibration = this.models.get(model);
    if (!calibration) {
      calibration = new ModelCalibration(model, this.store);
      this.models.set(model, calibration);
    }
    return calibration;
  }

  /** Saves what was learnt since the last save (hob calls it when it closes). */
  flush(): void {
    for (const calibration of this.models.values()) calibration.flush();
  }
}

/** A stored state hob can use (the store hands back whatever JSON the row holds). */
export function isCalibrationState(value: unknown): value is CalibrationState {
  const finite = (part: unknown, ...keys: string[]): boolean => typeof part === 'object' && part !== null && keys.every((key) => Number.isFinite((part as Record<string, unknown>)[key]));
  const kind = (part: unknown): boolean => {
    if (typeof part !== 'object' || part === null) return false;
    const state = part as Record<string, unknown>;
    return finite(state.whole, 'reported', 'estimated') && finite(state.marginal, 'reported', 'estimated') && finite(state.error, 'sum', 'weight');
  };
  if (typeof value !== 'object' || value === null) return false;
  const state = value as Record<string, unknown>;
  return kind(state.chars) && kind(state.pieces) && Number.isFinite(state.samples);
}
