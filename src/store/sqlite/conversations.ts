import type { Clock } from '../../core/clock.js';
import { newId, type IdGenerator } from '../../core/ids.js';
import type { Message, Usage } from '../../core/messages.js';
import { answerText, historyFrom, leavesWorkOpen, searchableWords, titleOf, type AppendOptions, type BoundaryMeta, type ConversationRepository, type SessionRow, type UsageTotals } from '../conversations.js';
import type { Db } from './db.js';
import { MessageIndex } from './message-index.js';

/** Conversations on SQLite (see the port, ../conversations.ts); session search through FTS5 (messages_fts, written in batches: message-index.ts). */
export class SqliteConversations implements ConversationRepository {
  private readonly statements;
  private readonly appendTx: (sessionId: string, message: Message, options: AppendOptions) => void;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Session search's index (the store's, shared with its archive; one of its own by default). */
    private readonly index: MessageIndex = new MessageIndex(db),
    private readonly ids: IdGenerator = newId,
  ) {
    this.statements = {
      active: db.prepare<[string], { id: string; session_key: string; created_at: number; updated_at: number }>(
        'SELECT id, session_key, created_at, updated_at FROM sessions WHERE session_key = ? AND active = 1 ORDER BY created_at DESC LIMIT 1',
      ),
      insertSession: db.prepare('INSERT INTO sessions (id, session_key, active, created_at, updated_at) VALUES (?, ?, 1, ?, ?)'),
      deactivate: db.prepare('UPDATE sessions SET active = 0 WHERE session_key = ? AND active = 1'),
      setRunning: db.prepare('UPDATE sessions SET running = ? WHERE id = ?'),
      running: db.prepare<[string], { running: number }>('SELECT running FROM sessions WHERE id = ?'),
      insertMessage: db.prepare('INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)'),
      messages: db.prepare<[string, number], { role: 'user' | 'assistant'; content: string }>(
        'SELECT role, content FROM messages WHERE session_id = ? AND id > ? ORDER BY id',
      ),
      boundary: db.prepare<[string], { through_message_id: number; messages: string }>(
        'SELECT through_message_id, messages FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1',
      ),
      lastMessageId: db.prepare<[string], { id: number | null }>('SELECT MAX(id) id FROM messages WHERE session_id = ?'),
      insertBoundary: db.prepare(
        `INSERT INTO compactions (session_id, through_message_id, messages, trigger, level, tokens_before, tokens_after, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      workingMemory: db.prepare<[string], { working_memory: string | null }>('SELECT working_memory FROM sessions WHERE id = ?'),
      sessionById: db.prepare<[string], { id: string; session_key: string; created_at: number; updated_at: number; person_id: string | null; active: number }>(
        'SELECT id, session_key, created_at, updated_at, person_id, active FROM sessions WHERE id = ?',
      ),
      reopen: db.prepare('UPDATE sessions SET active = 1, session_key = ? WHERE id = ?'),
      insertUsage: db.prepare(
        `INSERT INTO usage (session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      usageTotals: db.prepare<[string], { i: number; o: number; cr: number; cw: number; c: number; n: number }>(
        `SELECT COALESCE(SUM(input_tokens),0) i, COALESCE(SUM(output_tokens),0) o, COALESCE(SUM(cache_read_tokens),0) cr,
                COALESCE(SUM(cache_write_tokens),0) cw, COALESCE(SUM(cost_usd),0) c, COUNT(*) n FROM usage WHERE session_id = ?`,
      ),
    };
    this.appendTx = db.transaction((sessionId: string, message: Message, options: AppendOptions) => {
      const now = this.clock.now();
      const { lastInsertRowid } = this.statements.insertMessage.run(sessionId, message.role, JSON.stringify(message.content), now);
      // The session's row changes once per message: its time, and what goes with the message.
      const set: [string, unknown][] = [['updated_at = ?', now]];
      if (options.workingMemory !== undefined) set.push(['working_memory = ?', options.workingMemory]);
      if (options.run !== undefined) set.push(['running = ?', options.run === 'starts' ? 1 : 0]);
      // With a person: the message becomes findable by them (session search); their message
      // makes the session theirs (its first person's) and titles it by their first words.
      const words = options.personId === undefined ? '' : searchableWords(message);
      if (options.personId !== undefined && message.role === 'user') set.push(['person_id = COALESCE(person_id, ?)', options.personId], ['title = COALESCE(title, ?)', words ? titleOf(words) : null]);
      this.db.prepare(`UPDATE sessions SET ${set.map(([column]) => column).join(', ')} WHERE id = ?`).run(...set.map(([, value]) => value), sessionId);
      if (words && options.personId !== undefined) this.index.add({ messageId: Number(lastInsertRowid), text: words, personId: options.personId, sessionId, role: message.role });
      if (options.usage) this.recordUsage(sessionId, options.usage.model, options.usage.usage, options.usage.costUsd);
    });
  }

  activeSession(sessionKey: string): SessionRow {
    const row = this.statements.active.get(sessionKey);
    if (row) return { id: row.id, sessionKey: row.session_key, createdAt: row.created_at, updatedAt: row.updated_at };
    // None is active, as the look-up just saw (one process writes this file): nothing to end.
    return this.insertSession(sessionKey);
  }

  startSession(sessionKey: string): SessionRow {
    return this.db.transaction(() => {
      this.statements.deactivate.run(sessionKey);
      return this.insertSession(sessionKey);
    })();
  }

  private insertSession(sessionKey: string): SessionRow {
    const now = this.clock.now();
    const id = this.ids('ses');
    this.statements.insertSession.run(id, sessionKey, now, now);
    return { id, sessionKey, createdAt: now, updatedAt: now, started: true };
  }

  appendMessage(sessionId: string, message: Message, options: AppendOptions = {}): void {
    this.appendTx(sessionId, message, options);
  }

  saveBoundary(sessionId: string, messages: Message[], meta: BoundaryMeta): void {
    const through = this.statements.lastMessageId.get(sessionId)?.id ?? 0;
    this.statements.insertBoundary.run(sessionId, through, JSON.stringify(messages), meta.trigger, meta.level, meta.tokensBefore, meta.tokensAfter, this.clock.now());
  }

  workingMemory(sessionId: string): string | null {
    return this.statements.workingMemory.get(sessionId)?.working_memory ?? null;
  }

  reopenSession(sessionKey: string, sessionId: string, personId: string): SessionRow | undefined {
    const row = this.statements.sessionById.get(sessionId);
    if (!row || row.person_id !== personId) return undefined;
    if (row.active === 1 && row.session_key !== sessionKey) return undefined;
    this.db.transaction(() => {
      this.statements.deactivate.run(sessionKey);
      this.statements.reopen.run(sessionKey, sessionId);
    })();
    return { id: row.id, sessionKey, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  setRunning(sessionId: string, running: boolean): void {
    this.statements.setRunning.run(running ? 1 : 0, sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.statements.running.get(sessionId)?.running === 1;
  }

  loadMessages(sessionId: string): Message[] {
    const boundary = this.statements.boundary.get(sessionId);
    return historyFrom(boundary?.messages, this.statements.messages.all(sessionId, boundary?.through_message_id ?? 0));
  }

  recordUsage(sessionId: string, model: string, usage: Usage, costUsd: number): void {
    this.statements.insertUsage.run(
      sessionId,
      model,
      usage.inputTokens,
      usage.outputTokens,
      usage.cacheReadTokens,
      usage.cacheWriteTokens,
      costUsd,
      this.clock.now(),
    );
  }

  usageTotals(sessionId: string): UsageTotals {
    const row = this.statements.usageTotals.get(sessionId) ?? { i: 0, o: 0, cr: 0, cw: 0, c: 0, n: 0 };
    return { inputTokens: row.i, outputTokens: row.o, cacheReadTokens: row.cr, cacheWriteTokens: row.cw, costUsd: row.c, requests: row.n };
  }

  pendingWork(): string[] {
    const rows = this.db
      .prepare<[], { session_key: string; role: string; content: string }>(
        `SELECT s.session_key, m.role, m.content FROM sessions s
         JOIN messages m ON m.id = (SELECT MAX(id) FROM messages WHERE session_id = s.id)
         WHERE s.active = 1 AND s.running = 1`,
      )
      .all();
    return rows.filter((row) => leavesWorkOpen(row.role, row.content)).map((row) => row.session_key);
  }

  lastAnswerSince(sessionKey: string, since: number): string | undefined {
    const row = this.db
      .prepare<[string], { role: string; content: string; created_at: number }>(
        `SELECT m.role, m.content, m.created_at FROM sessions s
         JOIN messages m ON m.id = (SELECT MAX(id) FROM messages WHERE session_id = s.id)
         WHERE s.session_key = ? AND s.active = 1`,
      )
      .get(sessionKey);
    if (!row || row.created_at < since) return undefined;
    return answerText(row.role, row.content);
  }
}
