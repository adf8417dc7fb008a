/**
 * Conversations in the Store port: sessions, their messages (one row each, append-only), the
 * compaction boundaries, the running mark and usage. Both stores implement it (sqlite/ and
 * postgres/); the contract suite (test/store/contract/) holds them to the same behaviour.
 */
import type { Message, Usage } from '../core/messages.js';

export type SessionRow = {
  id: string;
  sessionKey: string;
  createdAt: number;
  updatedAt: number;
  /** True when the call that returned it started the session: nothing is stored in it yet. */
  started?: boolean;
};
export type UsageTotals = Usage & { costUsd: number; requests: number };
export type BoundaryMeta = { trigger: string; level: number; tokensBefore: number; tokensAfter: number };
/** One model request's usage, as a row of the session's usage. */
export type UsageRecord = { model: string; usage: Usage; costUsd: number };
/** How a message row is written (appendMessage). */
export type AppendOptions = { run?: 'starts' | 'ends'; personId?: string; workingMemory?: string; usage?: UsageRecord };

/**
 * Sessions and their messages. A conversation (session key) has one active session; `/new`
 * starts another. Messages are appended one row each — never rewritten.
 */
export interface ConversationRepository {
  /** The conversation's active session, created on first use. */
  activeSession(sessionKey: string): SessionRow;
  /** Ends the active session (its messages stay) and starts a new one. */
  startSession(sessionKey: string): SessionRow;
  /**
   * Appends one message (one row, one transaction). `run: 'starts' | 'ends'` also sets the
   * session's running mark in the same transaction: message and mark are stored together.
   * With `personId`, the message becomes findable by that person (session search), the
   * session becomes theirs and takes its title from their first message. With `usage`, the
   * usage row of the request that wrote it goes into the same transaction (one commit for both).
   */
  appendMessage(sessionId: string, message: Message, options?: AppendOptions): void;
  /**
   * Records a compaction: the compacted history replaces, for the model, every message up to
   * now. The messages themselves stay as they are; this is one new row.
   */
  saveBoundary(sessionId: string, messages: Message[], meta: BoundaryMeta): void;
  workingMemory(sessionId: string): string | null;
  /**
   * Makes an earlier session of this person the conversation's active one again (`/resume`).
   * Undefined when the session does not exist or is someone else's (the same answer for both),
   * or when it is still the open conversation of another chat (two chats must not write to one).
   */
  reopenSession(sessionKey: string, sessionId: string, personId: string): SessionRow | undefined;
  /**
   * Marks a run in flight (set when it starts, cleared when it ends, also when stopped). A
   * session still marked at start-up was cut off by a crash or a shutdown: it resumes.
   */
  setRunning(sessionId: string, running: boolean): void;
  isRunning(sessionId: string): boolean;
  /**
   * The session's history as the model sees it: the latest compaction's history, then every
   * message after it. Consecutive rows of one role (a message typed after a crash) are merged.
   */
  loadMessages(sessionId: string): Message[];
  recordUsage(sessionId: string, model: string, usage: Usage, costUsd: number): void;
  usageTotals(sessionId: string): UsageTotals;
  /**
   * Active sessions a crash or shutdown cut off mid-run: marked running, and the last message
   * leaves work open (a user message, or unanswered tool calls). Their session keys.
   */
  pendingWork(): string[];
  /**
   * The text of the answer a session's run ended with, when its last message is one stored
   * at or after `since` (ms): what a live message a crash left was to become.
   */
  lastAnswerSince(sessionKey: string, since: number): string | undefined;
}

/** A session's title: the start of its first message. */
export function titleOf(words: string): string {
  const line = words.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/**
 * The words of a message a person's session search finds: its text blocks, without the
 * bracketed notes hob adds itself ("[voice message]").
 */
export function searchableWords(message: Message): string {
  return message.content
    .flatMap((block) => (block.type === 'text' && !/^\[[^\]]*\]$/.test(block.text.trim()) ? [block.text] : []))
    .join('\n')
    .trim();
}

/** Whether a session's last message (its role and content) leaves work open for a resumed run. */
export function leavesWorkOpen(role: string, content: string): boolean {
  return role === 'user' || (JSON.parse(content) as { type: string }[]).some((block) => block.type === 'tool_use');
}

/** The text of an answer (a final assistant message), or undefined when it is not one. */
export function answerText(role: string, content: string): string | undefined {
  if (role !== 'assistant') return undefined;
  const blocks = JSON.parse(content) as { type: string; text?: string }[];
  if (blocks.some((block) => block.type === 'tool_use')) return undefined;
  const text = blocks.filter((block) => block.type === 'text').map((block) => block.text ?? '').join('');
  return text.trim() === '' ? undefined : text;
}

/**
 * A session's history as the model sees it: the last compaction's carried messages (if any),
 * then the rows after it, consecutive rows of one role joined into one message.
 */
export function historyFrom(boundaryMessages: string | undefined, rows: Iterable<{ role: 'user' | 'assistant'; content: string }>): Message[] {
  const history: Message[] = boundaryMessages ? (JSON.parse(boundaryMessages) as Message[]) : [];
  for (const row of rows) {
    const content = JSON.parse(row.content) as Message['content'];
    const last = history.at(-1);
    if (last && last.role === row.role) last.content.push(...content);
    else history.push({ role: row.role, content });
  }
  return history;
}
