/**
 * The window's arithmetic: how much room the answer keeps, when a prompt must compact first,
 * how low compaction aims, and how many answer tokens a request may ask for. Some servers
 * (vLLM, llama.cpp, Anthropic's newer models) refuse a request whose prompt plus max_tokens
 * exceeds the window, so max_tokens is sized to what the window leaves.
 */

export type CompactionSettings = {
  contextWindow: number;
  /** `model.max_tokens`: the most an answer may take. */
  maxTokens: number;
  /** Head room kept free below the window, besides the answer's room. */
  bufferTokens: number;
  /** Tool results of compactable tools kept as they are (level 1). */
  keepToolResults?: number;
  /** Messages at the end that levels 2–4 never touch (the deepest pass keeps only the newest request). */
  keepRecent?: number;
};

export type CompactionTrigger = 'auto' | 'reactive' | 'manual';

/** The least an answer gets; a request with less room than this is not sent. */
export const MIN_ANSWER_TOKENS = 256;

/** The default head room: 13,000 tokens, or a tenth of a small window. */
export function defaultBuffer(contextWindow: number): number {
  return Math.min(13_000, Math.floor(contextWindow / 10));
}

/** Room kept for the answer: max_tokens, but at most a quarter of the window (8,192 of a 4,096 window would leave nothing). */
export function answerReserve(contextWindow: number, maxTokens: number): number {
  return Math.max(Math.min(maxTokens, MIN_ANSWER_TOKENS), Math.min(maxTokens, Math.floor(contextWindow / 4)));
}

/** A request whose prompt is above this compacts first: window − the answer's room − buffer. */
export function autoCompactThreshold(settings: CompactionSettings): number {
  return settings.contextWindow - answerReserve(settings.contextWindow, settings.maxTokens) - settings.bufferTokens;
}

/** Compacting aims this low, so the next few requests do not compact again at once. */
export function compactionTarget(settings: CompactionSettings, trigger: CompactionTrigger): number {
  const threshold = autoCompactThreshold(settings);
  return Math.floor(threshold * (trigger === 'manual' ? 0.5 : 0.7));
}

/** What a size estimate may be off by: a few percent once calibrated, plus framing the estimate does not see. */
export function estimateMargin(promptTokens: number): number {
  return Math.ceil(promptTokens * 0.04) + 16;
}

/** max_tokens for one request: what the window leaves after the prompt, up to `model.max_tokens`. */
export function maxTokensFor(contextWindow: number, promptTokens: number, maxTokens: number): number {
  const room = contextWindow - promptTokens - estimateMargin(promptTokens);
  return Math.max(1, Math.min(maxTokens, room));
}

/** Whether a prompt of this size can be sent at all: the window must leave a useful answer. */
export function fitsWindow(contextWindow: number, promptTokens: number): boolean {
  return contextWindow - promptTokens - estimateMargin(promptTokens) >= MIN_ANSWER_TOKENS;
}
