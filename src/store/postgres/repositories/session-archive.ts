/** A person's past sessions on PostgreSQL (the port: ../../session-archive.ts): message_search ranked by ts_rank. */
import type { Message } from '../../../core/messages.js';
import { archiveWords, type SessionArchive, type SessionHit, type SessionSummary } from '../../session-archive.js';
import type { Sql } from '../sql.js';

type SummaryDb = { id: string; title: string | null; created_at: number; updated_at: number; active: boolean; n: number; chars: number };
const SUMMARY = `SELECT s.id, s.title, s.created_at, s.updated_at, s.active,
  (SELECT count(*) FROM messages m WHERE m.session_id = s.id) n,
  (SELECT coalesce(sum(length(m.content)), 0)::bigint FROM messages m WHERE m.session_id = s.id) chars FROM sessions s`;

export class PostgresSessionArchive implements SessionArchive {
  constructor(private readonly sql: Sql) {}

  list(personId: string | null, limit = 20): SessionSummary[] {
    const rows =
      personId === null
        ? this.sql.all<SummaryDb>(`${SUMMARY} ORDER BY s.updated_at DESC, s.seq DESC LIMIT ?`, limit)
        : this.sql.all<SummaryDb>(`${SUMMARY} WHERE s.person_id = ? ORDER BY s.updated_at DESC, s.seq DESC LIMIT ?`, personId, limit);
    return rows.map((row) => ({ id: row.id, title: row.title ?? '(untitled)', createdAt: row.created_at, updatedAt: row.updated_at, messages: row.n, chars: row.chars, active: row.active }));
  }

  /**
   * Each word matched stemmed (any of hob's languages) or as a prefix; numbers exactly. The
   * snippet marks the matched words « » as the SQLite store's does.
   */
  search(personId: string, query: string, limit = 5, sessionKey?: string): SessionHit[] {
    const words = archiveWords(query);
    if (words.length === 0) return [];
    const rows = this.sql.all<{ session_id: string; title: string | null; role: 'user' | 'assistant'; snippet: string; created_at: number }>(
      `WITH q AS (SELECT string_agg(CASE WHEN word ~ '^[0-9]+$' THEN hob_word_query(word)::text
                                         ELSE '(' || hob_word_query(word)::text || ' | ' || quote_literal(word) || ':*)' END, ' | ')::tsquery AS query
                  FROM unnest(?::text[]) AS word)
       SELECT f.session_id, s.title, f.role, m.created_at,
              ts_headline('simple', f.text, q.query, 'StartSel=«, StopSel=», MaxWords=24, MinWords=8, ShortWord=0, FragmentDelimiter=…, MaxFragments=1') snippet
       FROM q, message_search f JOIN messages m ON m.id = f.message_id JOIN sessions s ON s.id = f.session_id
       WHERE f.search @@ q.query AND f.person_id = ? AND (?::text IS NULL OR s.session_key = ?)
       ORDER BY ts_rank(f.search, q.query) DESC, f.message_id DESC LIMIT ?`,
      words, personId, sessionKey ?? null, sessionKey ?? null, limit,
    );
    return rows.map((row) => ({ sessionId: row.session_id, title: row.title ?? '(untitled)', role: row.role, snippet: row.snippet, at: row.created_at }));
  }

  messages(personId: string | null, sessionId: string): ReturnType<SessionArchive['messages']> {
    const owner = this.sql.get<{ person_id: string | null; title: string | null }>('SELECT person_id, title FROM sessions WHERE id = ?', sessionId);
    if (!owner || (personId !== null && owner.person_id !== personId)) return undefined;
    const messages = this.sql
      .all<{ role: 'user' | 'assistant'; content: string; created_at: number }>('SELECT role, content, created_at FROM messages WHERE session_id = ? ORDER BY id', sessionId)
      .map((row) => ({ role: row.role, content: JSON.parse(row.content) as Message['content'], at: row.created_at }));
    return { title: owner.title ?? '(untitled)', messages };
  }
}
