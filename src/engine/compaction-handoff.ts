/**
 * The compaction hand-off: where a session and its context keeper meet. The keeper decides
 * when and how far the prompt must shrink — before each request (`auto`), when the server
 * says it is too long (`reactive`), or on /compact (`manual`); the session gives it the
 * working memory to carry across and takes each result as a boundary row and a shorter
 * history (`SessionState.recordBoundary`). The loop sees only the two members of its port.
 */
import type { Message, Usage } from '../core/messages.js';
import type { CompactionTarget, ContextKeeper } from './context-keeper.js';
import type { LoopPort } from './run-query.js';

/** What the hand-off needs of a session: its history, and where a compaction lands. */
export type CompactedSession = CompactionTarget & {
  readonly history: readonly Message[];
  /** True once the conversation moved to another session: its counts then say nothing about the next request. */
  readonly superseded?: boolean;
};

/** The loop's compaction port for one run, and the provider's count of each request it sent. */
export type RunCompaction = Required<Pick<LoopPort, 'beforeRequest' | 'onPromptTooLong'>> & {
  /** The provider's count of the request just answered (sent with the history as it stands before the answer). */
  observe(usage: Usage): void;
};

export function runCompaction(keeper: ContextKeeper, session: CompactedSession, system: string, signal: AbortSignal): RunCompaction {
  return {
    beforeRequest: (messages) => keeper.beforeRequest({ system, messages }, session, signal),
    onPromptTooLong: (messages, error) => keeper.onPromptTooLong({ system, messages }, error, session, signal),
    observe: (usage) => {
      if (!session.superseded) keeper.observe(usage, session.history, system);
    },
  };
}

/** `/compact`: compacts now, as far as it can. Answers in one sentence for the person. */
export async function compactNow(keeper: ContextKeeper, session: CompactedSession, systemPrompt: (contextWindow: number) => string): Promise<string> {
  if (session.history.length < 2) return 'There is nothing to compact yet.';
  const system = systemPrompt((await keeper.window()).tokens);
  const compacted = await keeper.compact({ system, messages: session.history }, 'manual', session);
  if (keeper.lastError) return `I could not compact the conversation (${keeper.lastError}). It is unchanged.`;
  if (!compacted?.notice) return 'Nothing to compact: the conversation is already short.';
  return `Compacted the conversation (level ${compacted.notice.level}): about ${compacted.notice.tokensBefore.toLocaleString('en-US')} → ${compacted.notice.tokensAfter.toLocaleString('en-US')} tokens. The full record stays searchable.`;
}
