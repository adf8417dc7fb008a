/**
 * Compaction: the four levels applied cheapest first, each only when the one before did not
 * bring the prompt under its target; the trigger arithmetic; a circuit breaker for automatic
 * attempts; pre_compact / post_compact hooks. The caller stores the result as a boundary.
 */
import { PromptTooLongError, errorMessage } from '../../core/errors.js';
import type { Message } from '../../core/messages.js';
import { messageText } from '../../core/messages.js';
import type { HookGate } from '../ports.js';
import type { ProviderClient, ToolSpec } from '../../providers/types.js';
import { invariantProblems, newestPersonMessage } from './invariants.js';
import { chooseCut, clearOldToolResults, collapseLongTexts, outline, summaryText, transcript, withSummary } from './levels.js';
import { estimatePrompt, loadTokenizer } from './tokens.js';

export type CompactionTrigger = 'auto' | 'reactive' | 'manual';
export type CompactionLevel = 1 | 2 | 3 | 4;

export type CompactionResult = {
  messages: Message[];
  level: CompactionLevel;
  tokensBefore: number;
  tokensAfter: number;
  /** Tokens each level applied took off, in order. */
  saved: Array<{ level: CompactionLevel; tokens: number }>;
};

export type CompactionSettings = {
  contextWindow: number;
  maxTokens: number;
  /** Head room kept free below the window, besides the answer's max_tokens. */
  bufferTokens: number;
  /** Tool results of compactable tools kept as they are (level 1). */
  keepToolResults?: number;
  /** Messages at the end that levels 2–4 never touch. */
  keepRecent?: number;
};

export type PromptParts = { system: string; tools: readonly ToolSpec[]; messages: readonly Message[] };

/** The default head room: 13,000 tokens, or a tenth of a small window. */
export function defaultBuffer(contextWindow: number): number {
  return Math.min(13_000, Math.floor(contextWindow / 10));
}

/** A request whose prompt is above this compacts first: window − max_tokens − buffer. */
export function autoCompactThreshold(settings: CompactionSettings): number {
  return settings.contextWindow - settings.maxTokens - settings.bufferTokens;
}

/** Compacting aims this low, so the next few requests do not compact again at once. */
export function compactionTarget(settings: CompactionSettings, trigger: CompactionTrigger): number {
  const threshold = autoCompactThreshold(settings);
  return Math.floor(threshold * (trigger === 'manual' ? 0.5 : 0.7));
}

/** After this many automatic failures in a row, automatic attempts stop until one succeeds. */
const MAX_CONSECUTIVE_FAILURES = 3;
/** Summary requests that are themselves too long drop the oldest fifth and retry, this often. */
const SUMMARY_RETRIES = 3;

export class CompactionFailed extends Error {
  override name = 'CompactionFailed';
}

export type CompactorDeps = {
  provider(): ProviderClient;
  hooks: HookGate;
  /** Read at each use: `/model` may switch to a model with another window. */
  settings(): CompactionSettings;
};

/**
 * One conversation's compactor. Keeps the failure count, so three automatic failures in a
 * row stop automatic attempts (a manual or reactive success, or any success, re-arms them).
 */
export class Compactor {
  private failures = 0;

  constructor(private readonly deps: CompactorDeps) {}

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Whether automatic compaction is switched off by the circuit breaker. */
  get tripped(): boolean {
    return this.failures >= MAX_CONSECUTIVE_FAILURES;
  }

  /** Whether a request of this size must compact first. */
  needsCompaction(promptTokens: number): boolean {
    return promptTokens > autoCompactThreshold(this.deps.settings());
  }

  /**
   * Applies the levels until the prompt is under the trigger's target. Returns undefined when
   * there was nothing to compact; throws CompactionFailed when it could not get under target.
   */
  async compact(prompt: PromptParts, options: { trigger: CompactionTrigger; carried: string; sessionKey: string; signal?: AbortSignal }): Promise<CompactionResult | undefined> {
    if (options.trigger === 'auto' && this.tripped) return undefined;
    await loadTokenizer();
    const tokensBefore = estimatePrompt(prompt);
    // Reactive: the provider counted more than we did, so aim below what we have. Manual: the
    // person asked for it, so it frees something even in a conversation far from the window.
    const fixed = estimatePrompt({ ...prompt, messages: [] });
    const shrunk = fixed + Math.floor((tokensBefore - fixed) * (options.trigger === 'manual' ? 0.5 : 0.7));
    const target = options.trigger === 'auto' ? compactionTarget(this.deps.settings(), 'auto') : Math.min(compactionTarget(this.deps.settings(), options.trigger), shrunk);
    await this.deps.hooks.run('pre_compact', { session_key: options.sessionKey, trigger: options.trigger, tokens: tokensBefore }, options.signal);
    try {
      const result = await this.applyLevels(prompt, target, tokensBefore, options);
      this.failures = 0;
      await this.deps.hooks.run(
        'post_compact',
        { session_key: options.sessionKey, trigger: options.trigger, level: result?.level ?? 0, tokens_before: tokensBefore, tokens_after: result?.tokensAfter ?? tokensBefore },
        options.signal,
      );
      return result;
    } catch (error) {
      this.failures += 1;
      throw error instanceof CompactionFailed ? error : new CompactionFailed(errorMessage(error));
    }
  }

  private async applyLevels(
    prompt: PromptParts,
    target: number,
    tokensBefore: number,
    options: { trigger: CompactionTrigger; carried: string; signal?: AbortSignal },
  ): Promise<CompactionResult | undefined> {
    const { keepToolResults = 5, keepRecent = 6 } = this.deps.settings();
    const newest = newestPersonMessage(prompt.messages);
    const saved: CompactionResult['saved'] = [];
    let messages = [...prompt.messages];
    let tokens = tokensBefore;
    const size = (candidate: Message[]) => estimatePrompt({ ...prompt, messages: candidate });
    const accept = (level: CompactionLevel, candidate: Message[]): boolean => {
      const problems = invariantProblems(candidate, newest);
      if (problems.length) throw new CompactionFailed(`level ${level} broke the history: ${problems.join('; ')}`);
      const after = size(candidate);
      if (after < tokens) {
        saved.push({ level, tokens: tokens - after });
        messages = candidate;
        tokens = after;
      }
      return tokens <= target;
    };
    const done = (): CompactionResult | undefined => {
      const last = saved.at(-1);
      return last ? { messages, level: last.level, tokensBefore, tokensAfter: tokens, saved } : undefined;
    };

    if (accept(1, clearOldToolResults(messages, keepToolResults))) return done();
    if (accept(2, collapseLongTexts(messages, keepRecent))) return done();
    const cut = chooseCut(messages, keepRecent);
    if (cut === undefined) return this.under(done(), options.trigger);
    // Levels 3 and 4 summarize the same older messages; level 4 reads them, not level 3's outline.
    const unsummarized = messages;
    const head = unsummarized.slice(0, cut);
    if (accept(3, withSummary(unsummarized, cut, summaryText(3, head.length, outline(head), options.carried)))) return done();
    const summary = await this.summarize(head, options.signal);
    if (accept(4, withSummary(unsummarized, cut, summaryText(4, head.length, summary, options.carried)))) return done();
    return this.under(done(), options.trigger);
  }

  /** Not under target after every level: manual compaction keeps what it freed; the others failed. */
  private under(result: CompactionResult | undefined, trigger: CompactionTrigger): CompactionResult | undefined {
    if (trigger === 'manual') return result;
    throw new CompactionFailed(`still over the target after every level (${result ? `${result.tokensAfter} tokens` : 'nothing to compact'})`);
  }

  /** Level 4: the model summarizes; `<analysis>` is dropped, `<summary>` kept. Too long: drop the oldest fifth, retry. */
  private async summarize(older: readonly Message[], signal?: AbortSignal): Promise<string> {
    let entries = transcript(older);
    for (let attempt = 0; attempt <= SUMMARY_RETRIES; attempt += 1) {
      const outcome = await this.requestSummary(entries, signal);
      if (outcome.kind === 'summary') return outcome.text;
      if (outcome.kind === 'failed') throw new CompactionFailed(`the summary request failed: ${outcome.message}`);
      const drop = Math.max(1, Math.ceil(entries.length / 5));
      entries = [`(the ${drop} oldest entries were left out: the summary request was too long)`, ...entries.slice(drop)];
    }
    throw new CompactionFailed('the summary request stayed too long after dropping the oldest parts');
  }

  private async requestSummary(entries: string[], signal?: AbortSignal): Promise<{ kind: 'summary'; text: string } | { kind: 'too_long' } | { kind: 'failed'; message: string }> {
    const request = {
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `${SUMMARY_INSTRUCTIONS}\n\n<transcript>\n${entries.join('\n')}\n</transcript>` }] }],
      tools: [],
      maxTokens: Math.min(4_096, this.deps.settings().maxTokens),
    };
    for await (const event of this.deps.provider().stream(request, signal ?? new AbortController().signal)) {
      if (event.type === 'done') {
        const answer = messageText(event.message);
        const summary = /<summary>([\s\S]*?)(<\/summary>|$)/.exec(answer)?.[1]?.trim();
        const cleaned = (summary ?? answer.replace(/<analysis>[\s\S]*?<\/analysis>/g, '')).trim();
        return cleaned ? { kind: 'summary', text: cleaned } : { kind: 'failed', message: 'the model returned an empty summary' };
      }
      if (event.type === 'error') return event.error instanceof PromptTooLongError ? { kind: 'too_long' } : { kind: 'failed', message: event.error.message };
    }
    return { kind: 'failed', message: 'the summary stream ended without an answer' };
  }
}

/** Recognizes hob's own summary requests (the scripted model in tests and benchmarks answers them). */
export const SUMMARY_SYSTEM = 'You write the summary hob keeps of the earlier part of a conversation, so it can carry on without it.';

const SUMMARY_INSTRUCTIONS = [
  'Summarize the transcript below. First think in an <analysis> block (it is thrown away), then write a <summary> block with these sections:',
  '1. The person\'s requests and intent  2. Key facts and decisions (names, numbers, paths, settings — exactly)  3. Files and code touched',
  '4. Errors and how they were fixed  5. What was finished  6. Pending tasks  7. Current work  8. The next step.',
  'Keep every fact the person stated that may matter later. Be concise.',
].join('\n');
