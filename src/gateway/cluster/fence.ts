/**
 * The engine's conversations with a fence: a process writes a conversation's history only
 * while it holds the conversation's lease at the epoch it took it with. A process taken for
 * dead (silent past the lease) whose run wakes up later cannot write over the history the
 * process that took the conversation over writes now: its write is refused and rolled back.
 */
import type { Message, Usage } from '../../core/messages.js';
import type { AppendOptions, BoundaryMeta, ConversationRepository, SessionRow, UsageTotals } from '../../store/conversations.js';

export class LeaseLostError extends Error {
  constructor(readonly sessionKey: string) {
    super(`another hob process took this conversation over (${sessionKey}); this process no longer writes to it`);
  }
}

export class FencedConversations implements ConversationRepository {
  /** The conversation each session belongs to, learnt as the engine opens it. */
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly inner: ConversationRepository,
    /** Whether writes for the conversation are checked (it is one this process holds or held). */
    private readonly guarded: (sessionKey: string) => boolean,
    /** Throws when this process may not write for the conversation. */
    private readonly check: (sessionKey: string) => void,
    private readonly transaction: <T>(fn: () => T) => T,
  ) {}

  activeSession(sessionKey: string): SessionRow {
    return this.learn(this.inner.activeSession(sessionKey));
  }

  startSession(sessionKey: string): SessionRow {
    return this.fenced(sessionKey, () => this.learn(this.inner.startSession(sessionKey)));
  }

  appendMessage(sessionId: string, message: Message, options?: AppendOptions): void {
    this.fencedSession(sessionId, () => this.inner.appendMessage(sessionId, message, options));
  }

  saveBoundary(sessionId: string, messages: Message[], meta: BoundaryMeta): void {
    this.fencedSession(sessionId, () => this.inner.saveBoundary(sessionId, messages, meta));
  }

  workingMemory(sessionId: string): string | null {
    return this.inner.workingMemory(sessionId);
  }

  reopenSession(sessionKey: string, sessionId: string, personId: string): SessionRow | undefined {
    return this.fenced(sessionKey, () => {
      const row = this.inner.reopenSession(sessionKey, sessionId, personId);
      return row && this.learn(row);
    });
  }

  setRunning(sessionId: string, running: boolean): void {
    this.fencedSession(sessionId, () => this.inner.setRunning(sessionId, running));
  }

  isRunning(sessionId: string): boolean {
    return this.inner.isRunning(sessionId);
  }

  loadMessages(sessionId: string): Message[] {
    return this.inner.loadMessages(sessionId);
  }

  recordUsage(sessionId: string, model: string, usage: Usage, costUsd: number): void {
    this.inner.recordUsage(sessionId, model, usage, costUsd);
  }

  usageTotals(sessionId: string): UsageTotals {
    return this.inner.usageTotals(sessionId);
  }

  pendingWork(): string[] {
    return this.inner.pendingWork();
  }

  lastAnswerSince(sessionKey: string, since: number): string | undefined {
    return this.inner.lastAnswerSince(sessionKey, since);
  }

  private learn(row: SessionRow): SessionRow {
    this.keys.set(row.id, row.sessionKey);
    return row;
  }

  private fencedSession(sessionId: string, write: () => void): void {
    const key = this.keys.get(sessionId);
    if (key === undefined) return write();
    this.fenced(key, write);
  }

  /** The check and the write in one transaction: the lease row stays locked until both commit. */
  private fenced<T>(sessionKey: string, write: () => T): T {
    if (!this.guarded(sessionKey)) return write();
    return this.transaction(() => {
      this.check(sessionKey);
      return write();
    });
  }
}
