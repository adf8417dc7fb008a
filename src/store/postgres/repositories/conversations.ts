/** Conversations on PostgreSQL (the port: ../../conversations.ts); session search through message_search. */
import type { Clock } from '../../../core/clock.js';
import { newId, type IdGenerator } from '../../../core/ids.js';
import type { Message, Usage } from '../../../core/messages.js';
import { answerText, historyFrom, leavesWorkOpen, searchableWords, titleOf, type AppendOptions, type BoundaryMeta, type ConversationRepository, type SessionRow, type UsageTotals } from '../../conversations.js';
import type { Sql } from '../sql.js';

type SessionDb = { id: string; session_key: string; created_at: number; updated_at: number };
const toSession = (row: SessionDb): SessionRow => ({ id: row.id, sessionKey: row.session_key, createdAt: row.created_at, updatedAt: row.updated_at });
/** A session's last message: the row its running mark is judged by. */
const LAST_MESSAGE = 'JOIN messages m ON m.id = (SELECT max(id) FROM messages WHERE session_id = s.id)';

export class PostgresConversations implements ConversationRepository {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly ids: IdGenerator = newId,
  ) {}

  activeSession(sessionKey: string): SessionRow {
    const row = this.sql.get<SessionDb>('SELECT id, session_key, created_at, updated_at FROM sessions WHERE session_key = ? AND active ORDER BY created_at DESC, seq DESC LIMIT 1', sessionKey);
    return row ? toSession(row) : this.startSession(sessionKey);
  }

  startSession(sessionKey: string): SessionRow {
    const now = this.clock.now();
    const id = this.ids('ses');
    this.sql.transaction(() => {
      this.sql.run('UPDATE sessions SET active = false WHERE session_key = ? AND active', sessionKey);
      this.sql.run('INSERT INTO sessions (id, session_key, active, created_at, updated_at) VALUES (?, ?, true, ?, ?)', id, sessionKey, now, now);
    });
    return { id, sessionKey, createdAt: now, updatedAt: now, started: true };
  }

  appendMessage(sessionId: string, message: Message, options: AppendOptions = {}): void {
    this.sql.transaction(() => {
      const now = this.clock.now();
      const row = this.sql.get<{ id: number }>('INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?) RETURNING id', sessionId, message.role, JSON.stringify(message.content), now);
      if (options.personId !== undefined) {
        const words = searchableWords(message);
        if (message.role === 'user') this.sql.run('UPDATE sessions SET person_id = coalesce(person_id, ?), title = coalesce(title, ?) WHERE id = ?', options.personId, words ? titleOf(words) : null, sessionId);
        if (words) this.sql.run('INSERT INTO message_search (message_id, person_id, session_id, role, text) VALUES (?, ?, ?, ?, ?)', row?.id ?? 0, options.personId, sessionId, message.role, words);
      }
      if (options.workingMemory !== undefined) this.sql.run('UPDATE sessions SET working_memory = ? WHERE id = ?', options.workingMemory, sessionId);
      this.sql.run(options.run === undefined ? 'UPDATE sessions SET updated_at = ? WHERE id = ?' : 'UPDATE sessions SET updated_at = ?, running = ? WHERE id = ?', ...(options.run === undefined ? [now, sessionId] : [now, options.run === 'starts', sessionId]));
      if (options.usage) this.recordUsage(sessionId, options.usage.model, options.usage.usage, options.usage.costUsd);
    });
  }

  saveBoundary(sessionId: string, messages: Message[], meta: BoundaryMeta): void {
    const through = this.sql.get<{ id: number | null }>('SELECT max(id) AS id FROM messages WHERE session_id = ?', sessionId)?.id ?? 0;
    this.sql.run(
      'INSERT INTO compactions (session_id, through_message_id, messages, trigger, level, tokens_before, tokens_after, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      sessionId, through, JSON.stringify(messages), meta.trigger, meta.level, meta.tokensBefore, meta.tokensAfter, this.clock.now(),
    );
  }

  workingMemory(sessionId: string): string | null {
    return this.sql.get<{ working_memory: string | null }>('SELECT working_memory FROM sessions WHERE id = ?', sessionId)?.working_memory ?? null;
  }

  reopenSession(sessionKey: string, sessionId: string, personId: string): SessionRow | undefined {
    const row = this.sql.get<SessionDb & { person_id: string | null; active: boolean }>('SELECT id, session_key, created_at, updated_at, person_id, active FROM sessions WHERE id = ?', sessionId);
    if (!row || row.person_id !== personId) return undefined;
    if (row.active && row.session_key !== sessionKey) return undefined;
    this.sql.transaction(() => {
      this.sql.run('UPDATE sessions SET active = false WHERE session_key = ? AND active', sessionKey);
      this.sql.run('UPDATE sessions SET active = true, session_key = ? WHERE id = ?', sessionKey, sessionId);
    });
    return { id: row.id, sessionKey, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  setRunning(sessionId: string, running: boolean): void {
    this.sql.run('UPDATE sessions SET running = ? WHERE id = ?', running, sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.sql.get<{ running: boolean }>('SELECT running FROM sessions WHERE id = ?', sessionId)?.running === true;
  }

  loadMessages(sessionId: string): Message[] {
    const boundary = this.sql.get<{ through_message_id: number; messages: string }>('SELECT through_message_id, messages FROM compactions WHERE session_id = ? ORDER BY id DESC LIMIT 1', sessionId);
    const rows = this.sql.all<{ role: 'user' | 'assistant'; content: string }>('SELECT role, content FROM messages WHERE session_id = ? AND id > ? ORDER BY id', sessionId, boundary?.through_message_id ?? 0);
    return historyFrom(boundary?.messages, rows);
  }

  recordUsage(sessionId: string, model: string, usage: Usage, costUsd: number): void {
    this.sql.run(
      'INSERT INTO usage (session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      sessionId, model, usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens, costUsd, this.clock.now(),
    );
  }

  usageTotals(sessionId: string): UsageTotals {
    // sum() of bigint is numeric, which the driver hands over as text: cast back.
    const row = this.sql.get<{ i: number; o: number; cr: number; cw: number; c: number; n: number }>(
      `SELECT coalesce(sum(input_tokens), 0)::bigint i, coalesce(sum(output_tokens), 0)::bigint o, coalesce(sum(cache_read_tokens), 0)::bigint cr,
              coalesce(sum(cache_write_tokens), 0)::bigint cw, coalesce(sum(cost_usd), 0)::float8 c, count(*) n FROM usage WHERE session_id = ?`,
      sessionId,
    ) ?? { i: 0, o: 0, cr: 0, cw: 0, c: 0, n: 0 };
    return { inputTokens: row.i, outputTokens: row.o, cacheReadTokens: row.cr, cacheWriteTokens: row.cw, costUsd: row.c, requests: row.n };
  }

  pendingWork(): string[] {
    return this.sql
      .all<{ session_key: string; role: string; content: string }>(`SELECT s.session_key, m.role, m.content FROM sessions s ${LAST_MESSAGE} WHERE s.active AND s.running`)
      .filter((row) => leavesWorkOpen(row.role, row.content))
      .map((row) => row.session_key);
  }

  lastAnswerSince(sessionKey: string, since: number): string | undefined {
    const row = this.sql.get<{ role: string; content: string; created_at: number }>(`SELECT m.role, m.content, m.created_at FROM sessions s ${LAST_MESSAGE} WHERE s.session_key = ? AND s.active`, sessionKey);
    if (!row || row.created_at < since) return undefined;
    return answerText(row.role, row.content);
  }
}
