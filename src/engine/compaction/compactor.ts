/**
 * Compaction: the four levels applied cheapest first, each only when the one before did not
 * bring the prompt under its target; when the summary levels with the recent messages kept
 * are not enough, they go further, down to a summary plus the newest request. A circuit
 * breaker turns the model's summary (level 4) off after failures, never compaction itself.
 * pre_compact / post_compact hooks. The caller stores the result as a boundary.
 */
import { PromptTooLongError, errorMessage } from '../../core/errors.js';
import type { Message } from '../../core/messages.js';
import { messageText } from '../../core/messages.js';
import type { HookGate } from '../ports.js';
import type { ProviderClient } from '../../providers/types.js';
import { answerReserve, compactionTarget, type CompactionSettings, type CompactionTrigger } from './budget.js';
import { invariantProblems, newestPersonMessage } from './invariants.js';
import { chooseCut, clearOldToolResults, collapseLongTexts, outline, summaryText, transcript, withSummary, type KeepText } from './levels.js';
import { cheapTokens, estimatePrompt, type PromptParts } from './tokens.js';

export { autoCompactThreshold, compactionTarget, defaultBuffer, type CompactionSettings, type CompactionTrigger } from './budget.js';
export type { PromptParts } from './tokens.js';

export type CompactionLevel = 1 | 2 | 3 | 4;

export type CompactionResult = {
  messages: Message[];
  level: CompactionLevel;
  tokensBefore: number;
  tokensAfter: number;
  /** Tokens each level applied took off, in order. */
  saved: Array<{ level: CompactionLevel; tokens: number }>;
  /** False when even the deepest pass stayed above the target (the caller checks it still fits). */
  underTarget: boolean;
};

export type CompactOptions = {
  trigger: CompactionTrigger;
  /** Working memory, carried into the summary. */
  carried: string;
  sessionKey: string;
  signal?: AbortSignal;
  /** The prompt's size with these messages, in the provider's tokens; default: the raw estimate. */
  measure?(messages: readonly Message[]): number;
  /** A text's size in the provider's tokens (sizes the summary request); default the raw estimate. */
  textTokens?(text: string): number;
};

/** After this many failed model summaries in a row, automatic compaction stops asking the model until one succeeds. */
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
  /** Keeps the whole of a text cut short, in the workspace (level 2's marker names where). */
  keep?: KeepText;
};

type Run = CompactOptions & { target: number; tokensBefore: number; measure(messages: readonly Message[]): number };

/**
 * One conversation's compactor. Counts failed model summaries in a row: after three, an
 * automatic compaction goes from the outline straight to the deeper passes (a manual or
 * reactive one still asks the model, and its success re-arms it).
 */
export class Compactor {
  private failures = 0;

  constructor(private readonly deps: CompactorDeps) {}

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Whether automatic compaction has stopped asking the model for summaries. */
  get tripped(): boolean {
    return this.failures >= MAX_CONSECUTIVE_FAILURES;
  }

  /**
   * Applies the levels until the prompt is under the trigger's target, or as far as they go.
   * Returns undefined when there was nothing to compact; throws CompactionFailed only when a
   * level would break the history's invariants.
   */
  async compact(prompt: PromptParts, options: CompactOptions): Promise<CompactionResult | undefined> {
    const measure = options.measure ?? ((messages: readonly Message[]) => estimatePrompt({ ...prompt, messages }));
    const tokensBefore = measure(prompt.messages);
    const settings = this.deps.settings();
    // Manual: the person asked for it, so it frees something even far from the window.
    const fixed = measure([]);
    const halved = fixed + Math.floor((tokensBefore - fixed) * 0.5);
    const target = options.trigger === 'manual' ? Math.min(compactionTarget(settings, 'manual'), halved) : compactionTarget(settings, options.trigger);
    await this.deps.hooks.run('pre_compact', { session_key: options.sessionKey, trigger: options.trigger, tokens: tokensBefore }, options.signal);
    try {
      const result = await this.applyLevels(prompt, { ...options, target, tokensBefore, measure });
      await this.deps.hooks.run(
        'post_compact',
        { session_key: options.sessionKey, trigger: options.trigger, level: result?.level ?? 0, tokens_before: tokensBefore, tokens_after: result?.tokensAfter ?? tokensBefore },
        options.signal,
      );
      return result;
    } catch (error) {
      throw error instanceof CompactionFailed ? error : new CompactionFailed(errorMessage(error));
    }
  }

  private async applyLevels(prompt: PromptParts, run: Run): Promise<CompactionResult | undefined> {
    const settings = this.deps.settings();
    const { keepToolResults = 5, keepRecent = 6 } = settings;
    const newest = newestPersonMessage(prompt.messages);
    const saved: CompactionResult['saved'] = [];
    let messages = [...prompt.messages];
    let tokens = run.tokensBefore;
    let level: CompactionLevel | undefined;
    const accept = (at: CompactionLevel, candidate: Message[]): boolean => {
      const problems = invariantProblems(candidate, newest);
      if (problems.length) throw new CompactionFailed(`level ${at} broke the history: ${problems.join('; ')}`);
      const after = run.measure(candidate);
      if (after < tokens) {
        saved.push({ level: at, tokens: tokens - after });
        messages = candidate;
        tokens = after;
        level = at;
      }
      return tokens <= run.target;
    };
    const done = (): CompactionResult | undefined =>
      level === undefined ? undefined : { messages, level, tokensBefore: run.tokensBefore, tokensAfter: tokens, saved, underTarget: tokens <= run.target };

    if (accept(1, clearOldToolResults(messages, keepToolResults))) return done();
    // A block over about a quarter of the window is too big to carry even among the recent messages.
    if (accept(2, collapseLongTexts(messages, keepRecent, this.deps.keep, Math.max(4_000, settings.contextWindow)))) return done();

    // Levels 3 and 4 summarize the older messages (level 4 reads them, not level 3's outline);
    // each pass keeps fewer recent ones, the last only the newest request and its tool loop.
    const unsummarized = messages;
    const outlineChars = Math.min(4_000, Math.max(600, Math.floor(settings.contextWindow * 0.6)));
    let modelSummary: { cut: number; text: string } | undefined;
    let askedModel = false;
    const passes = [...new Set([keepRecent, 2, 0])].filter((keep) => keep <= keepRecent || keep === 0);
    let lastCut = 0;
    for (const keep of passes) {
      const cut = chooseCut(unsummarized, keep);
      // A short history may give the same cut for fewer kept messages: nothing new to try.
      if (cut === undefined || cut <= lastCut) continue;
      lastCut = cut;
      const head = unsummarized.slice(0, cut);
      const carried = run.carried;
      if (!modelSummary && accept(3, withSummary(unsummarized, cut, summaryText(3, head.length, outline(head, outlineChars), carried)))) return done();
      // The model is asked once per compaction (a failure is not retried with more to read).
      if (!askedModel && !(run.trigger === 'auto' && this.tripped)) {
        askedModel = true;
        modelSummary = await this.modelSummary(head, cut, run);
      }
      if (modelSummary) {
        const later = unsummarized.slice(modelSummary.cut, cut);
        const text = later.length ? `${modelSummary.text}\nAfter that:\n${outline(later, outlineChars)}` : modelSummary.text;
        if (accept(4, withSummary(unsummarized, cut, summaryText(4, head.length, text, carried)))) return done();
      }
    }
    // Still over (and it must fit, not only halve): the newest request with a shorter and
    // shorter summary of everything before it.
    const cut = run.trigger === 'manual' ? undefined : chooseCut(unsummarized, 0);
    if (cut !== undefined) {
      const head = unsummarized.slice(0, cut);
      for (const chars of [Math.floor(outlineChars / 3), 0]) {
        const carried = chars ? run.carried.slice(0, chars * 2) : '';
        const text = chars ? outline(head, chars) : 'Only this note is left of it: the window is too small for more.';
        if (accept(3, withSummary(unsummarized, cut, summaryText(3, head.length, text, carried)))) return done();
      }
    }
    return done();
  }

  /** Level 4's text, or undefined when the model could not write one (counted for the circuit breaker). */
  private async modelSummary(head: readonly Message[], cut: number, run: Run): Promise<{ cut: number; text: string } | undefined> {
    try {
      const text = await this.summarize(head, run);
      this.failures = 0;
      return { cut, text };
    } catch {
      this.failures += 1;
      return undefined;
    }
  }

  /** Level 4: the model summarizes; `<analysis>` is dropped, `<summary>` kept. Too long: drop the oldest fifth, retry. */
  private async summarize(older: readonly Message[], run: Run): Promise<string> {
    const settings = this.deps.settings();
    const maxTokens = Math.min(2_048, answerReserve(settings.contextWindow, settings.maxTokens));
    // The request must fit the window itself: the newest entries that do, the oldest left out.
    const textTokens = run.textTokens ?? cheapTokens;
    const room = Math.floor((settings.contextWindow - maxTokens) * 0.85) - textTokens(SUMMARY_SYSTEM + SUMMARY_INSTRUCTIONS);
    let { entries, omitted } = fitEntries(transcript(older), room, textTokens);
    for (let attempt = 0; attempt <= SUMMARY_RETRIES; attempt += 1) {
      const note = omitted ? [`(the ${omitted} oldest entries were left out to fit the window)`] : [];
      const outcome = await this.requestSummary([...note, ...entries], maxTokens, run.signal);
      if (outcome.kind === 'summary') return outcome.text;
      if (outcome.kind === 'failed') throw new CompactionFailed(`the summary request failed: ${outcome.message}`);
      const drop = Math.max(1, Math.ceil(entries.length / 5));
      entries = entries.slice(drop);
      omitted += drop;
    }
    throw new CompactionFailed('the summary request stayed too long after dropping the oldest parts');
  }

  private async requestSummary(entries: string[], maxTokens: number, signal?: AbortSignal): Promise<{ kind: 'summary'; text: string } | { kind: 'too_long' } | { kind: 'failed'; message: string }> {
    const request = {
      system: SUMMARY_SYSTEM,
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `${SUMMARY_INSTRUCTIONS}\n\n<transcript>\n${entries.join('\n')}\n</transcript>` }] }],
      tools: [],
      maxTokens,
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

/** The newest transcript entries within `room` estimated tokens, and how many older ones were left out. */
function fitEntries(all: string[], room: number, textTokens: (text: string) => number): { entries: string[]; omitted: number } {
  let used = 0;
  let from = all.length;
  while (from > 0) {
    const cost = textTokens(`${all[from - 1] as string}\n`);
    if (used + cost > room) break;
    used += cost;
    from -= 1;
  }
  return { entries: all.slice(from), omitted: from };
}

/** Recognizes hob's own summary requests (the scripted model in tests and benchmarks answers them). */
export const SUMMARY_SYSTEM = 'You write the summary hob keeps of the earlier part of a conversation, so it can carry on without it.';

const SUMMARY_INSTRUCTIONS = [
  'Summarize the transcript below. First think in an <analysis> block (it is thrown away), then write a <summary> block with these sections:',
  '1. The person\'s requests and intent  2. Key facts and decisions (names, numbers, paths, settings — exactly)  3. Files and code touched',
  '4. Errors and how they were fixed  5. What was finished  6. Pending tasks  7. Current work  8. The next step.',
  'Keep every fact the person stated that may matter later. Be concise.',
].join('\n');
