/**
 * How big the next prompt is, in the provider's tokens: the provider's count of an earlier
 * request plus the cheap estimate (tokens.ts) of what changed since, scaled by what this
 * model's counts have taught (calibration.ts). One per conversation.
 */
import type { Message } from '../../core/messages.js';
import type { ModelCalibration } from './calibration.js';
import { estimateBoth, estimateMessagesBoth, textEstimate, type Estimate, type PromptParts } from './tokens.js';

/** A reported count this far from the estimate is not a count of this prompt (a stub, a proxy's placeholder). */
const PLAUSIBLE = { low: 0.2, high: 5 };

/**
 * The count the next sizes rest on. It keeps how many messages were counted and their
 * estimate, not the messages: the session may let its history go between runs (and read the
 * same rows back), and what the anchor held would stay in memory with it.
 */
type Anchor = { model: string; tokens: number; estimate: Estimate; counted: { messages: number; estimate: Estimate } };

/**
 * One conversation's prompt size. `observe` takes the provider's count of a request (its usage,
 * or the figure a refusal named); `size` then gives the next request's size in the provider's
 * tokens: the count plus the calibrated estimate of the difference, or, when the difference
 * would be larger than the prompt itself, the calibrated estimate of the whole.
 */
export class PromptSizer {
  private anchor: Anchor | undefined;

  /** `calibration(model)` is shared by every conversation on that model (and kept). */
  constructor(private readonly calibration: (model: string) => ModelCalibration) {}

  /** A count the provider reported; false when it cannot be a count of this prompt (then it is ignored). */
  observe(model: string, reported: number, prompt: PromptParts): boolean {
    const messages = estimateMessagesBoth(prompt.messages);
    const estimate = estimateBoth(prompt, messages);
    const ratio = reported / Math.max(1, Math.max(estimate.chars, estimate.pieces));
    if (reported <= 0 || ratio < PLAUSIBLE.low || reported / Math.max(1, Math.min(estimate.chars, estimate.pieces)) > PLAUSIBLE.high) return false;
    const previous = this.anchor?.model === model && startsWith(prompt.messages, messages, this.anchor.counted) ? this.anchor : undefined;
    this.calibration(model).learn({ tokens: reported, estimate }, previous && { tokens: previous.tokens, estimate: previous.estimate });
    this.anchor = { model, tokens: reported, estimate, counted: { messages: prompt.messages.length, estimate: messages } };
    return true;
  }

  /** Sizes from here on rest on `tokens` for this prompt, without learning from it (a figure hob assumed, not one it was told). */
  assume(model: string, tokens: number, prompt: PromptParts): void {
    const messages = estimateMessagesBoth(prompt.messages);
    this.anchor = { model, tokens, estimate: estimateBoth(prompt, messages), counted: { messages: prompt.messages.length, estimate: messages } };
  }

  size(model: string, prompt: PromptParts): number {
    const calibration = this.calibration(model);
    const both = estimateBoth(prompt);
    const kind = calibration.best();
    const estimate = both[kind];
    const ratios = calibration.ratios(kind);
    const anchor = this.anchor?.model === model ? this.anchor : undefined;
    if (anchor) {
      const difference = estimate - anchor.estimate[kind];
      if (Math.abs(difference) < estimate) return Math.max(0, Math.round(anchor.tokens + difference * ratios.marginal));
    }
    return Math.round(estimate * ratios.whole);
  }

  /** Messages' share of a prompt, in the provider's tokens (a message on its own, say). */
  messagesSize(model: string, messages: readonly Message[]): number {
    return this.scaled(model, estimateMessagesBoth(messages));
  }

  /** A text's size in the provider's tokens. */
  textSize(model: string, text: string): number {
    return this.scaled(model, textEstimate(text));
  }

  private scaled(model: string, estimate: Estimate): number {
    const calibration = this.calibration(model);
    const kind = calibration.best();
    return Math.round(estimate[kind] * calibration.ratios(kind).marginal);
  }

  /** A new or reopened session: the last count says nothing about it. */
  forget(): void {
    this.anchor = undefined;
  }
}

/**
 * Whether the history still begins with the messages counted: as many, with the same
 * estimate (both kinds), found as the whole history's (`all`) less that of the messages
 * after them. A compaction replaces the history's start, and the summary's estimate is not
 * the one of what it replaced; the same rows read back from the store are.
 */
function startsWith(messages: readonly Message[], all: Estimate, prefix: Anchor['counted']): boolean {
  if (prefix.messages > messages.length) return false;
  const after = estimateMessagesBoth(messages, prefix.messages);
  return all.chars - after.chars === prefix.estimate.chars && all.pieces - after.pieces === prefix.estimate.pieces;
}
