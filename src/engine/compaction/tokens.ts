/**
 * How big the next prompt is: what the provider reported for the previous request, plus an
 * estimate (gpt-tokenizer, o200k) of what was added since. Only the added part is estimated,
 * so the figure stays close to the provider's own count however long the conversation is.
 */
import type { Block, Message, Usage } from '../../core/messages.js';
import type { ToolSpec } from '../../providers/types.js';

/**
 * gpt-tokenizer takes ~180 ms to load, which `hob ask` should not pay before its first byte:
 * it loads on first need. Until then a character counts as a token, which is never too low
 * (a token is one or more characters), so a prompt that might be near the window always
 * waits for the exact count.
 */
let exactCount: ((text: string) => number) | undefined;
let loading: Promise<void> | undefined;

export function loadTokenizer(): Promise<void> {
  loading ??= import('gpt-tokenizer').then((module) => {
    exactCount = module.countTokens;
  });
  return loading;
}

export const tokenizerLoaded = (): boolean => exactCount !== undefined;

function countTokens(text: string): number {
  return exactCount ? exactCount(text) : text.length;
}

/** Context windows of common models, by name prefix (longest prefix wins). */
const KNOWN_WINDOWS: Array<[prefix: string, tokens: number]> = [
  ['claude-', 200_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-5', 400_000],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
];

/** Used for a model hob does not know (an OpenAI-compatible server): set `model.context_window`. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

export function contextWindowFor(model: string, configured?: number): number {
  if (configured) return configured;
  const name = model.toLowerCase();
  const match = KNOWN_WINDOWS.filter(([prefix]) => name.startsWith(prefix)).sort((a, b) => b[0].length - a[0].length)[0];
  return match ? match[1] : DEFAULT_CONTEXT_WINDOW;
}

/** Per-message framing the APIs add around the content (role, separators). */
const MESSAGE_OVERHEAD = 4;
/** What an image costs, roughly (Anthropic: ~1,600 tokens for a 1,000×1,000 picture). */
const IMAGE_TOKENS = 1_600;

function estimateBlock(block: Block): number {
  switch (block.type) {
    case 'text':
      return countTokens(block.text);
    case 'image':
      return IMAGE_TOKENS;
    case 'tool_use':
      return countTokens(block.name) + countTokens(JSON.stringify(block.input ?? {})) + 8;
    case 'tool_result':
      return countTokens(block.content) + 8;
    case 'thinking':
      return countTokens(block.thinking);
    case 'redacted_thinking':
      return Math.ceil(block.data.length / 4);
    default: {
      const unknownBlock: never = block;
      return unknownBlock;
    }
  }
}

function estimateMessages(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) {
    total += MESSAGE_OVERHEAD;
    for (const block of message.content) total += estimateBlock(block);
  }
  return total;
}

export function estimatePrompt(prompt: { system: string; tools: readonly ToolSpec[]; messages: readonly Message[] }): number {
  return countTokens(prompt.system) + (prompt.tools.length ? countTokens(JSON.stringify(prompt.tools)) : 0) + estimateMessages(prompt.messages);
}

/** Everything the provider counted as input for a request (cached parts included). */
function promptTokensOf(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/**
 * Tracks one conversation's prompt size. `observe` is called with the provider's usage of a
 * request and what it was sent with; `size` then estimates the next request. When the history
 * no longer extends the one counted (after a compaction), the whole prompt is estimated and
 * scaled by how far the estimate was from the provider's last count.
 */
export class PromptSizer {
  private last: { tokens: number; messages: readonly Message[]; parts?: { system: string; tools: readonly ToolSpec[] } } | undefined;
  /** Provider tokens per estimated token, learnt from the last count. */
  private ratio = 1;

  observe(usage: Usage, sent: readonly Message[], parts?: { system: string; tools: readonly ToolSpec[] }): void {
    const tokens = promptTokensOf(usage);
    // A fake or a proxy that reports nothing tells us nothing: keep estimating.
    this.last = tokens > 0 ? { tokens, messages: [...sent], ...(parts ? { parts } : {}) } : undefined;
  }

  /** Forgets the reported figure (after a compaction the history changed under it), keeping what it taught. */
  reset(): void {
    this.calibrate();
    this.last = undefined;
  }

  size(prompt: { system: string; tools: readonly ToolSpec[]; messages: readonly Message[] }): number {
    const last = this.last;
    if (last && startsWith(prompt.messages, last.messages)) {
      return last.tokens + estimateMessages(prompt.messages.slice(last.messages.length));
    }
    this.calibrate();
    return Math.round(estimatePrompt(prompt) * this.ratio);
  }

  private calibrate(): void {
    const last = this.last;
    if (!last?.parts || !tokenizerLoaded()) return;
    const estimate = estimatePrompt({ ...last.parts, messages: last.messages });
    if (estimate > 0) this.ratio = Math.min(2, Math.max(0.5, last.tokens / estimate));
    this.last = { tokens: last.tokens, messages: last.messages };
  }
}

/** Whether the history still begins with exactly the messages last sent (same objects). */
function startsWith(messages: readonly Message[], prefix: readonly Message[]): boolean {
  if (prefix.length > messages.length) return false;
  for (let i = 0; i < prefix.length; i += 1) if (messages[i] !== prefix[i]) return false;
  return true;
}
