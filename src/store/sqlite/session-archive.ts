/** A person's past sessions on SQLite (the port: ../session-archive.ts). */
import type { Message } from '../../core/messages.js';
import { archiveWords, type SessionArchive, type SessionHit, type SessionSummary } from '../session-archive.js';
import type { Db } from './db.js';
import { MessageIndex } from './message-index.js';

/** The session archive on SQLite: messages_fts (FTS5) ranked by bm25. */
export class SqliteSessionArchive implements SessionArchive {
  private readonly statements;

  constructor(
    db: Db,
    /** Messages' search rows reach the index in batches: a search moves the waiting ones in first. */
    private readonly index: MessageIndex = new MessageIndex(db),
  ) {
    this.statements = {
      list: db.prepare<[string, number], { id: string; title: string | null; created_at: number; updated_at: number; active: number; n: number; chars: number }>(
        `SELECT s.id, s.title, s.created_at, s.updated_at, s.active,
                (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) n,
                (SELECT COALESCE(SUM(LENGTH(m.content)), 0) FROM messages m WHERE m.session_id = s.id) chars
         FROM sessions s WHERE s.person_id = ? ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?`,
      ),
      listAll: db.prepare<[number], { id: string; title: string | null; created_at: number; updated_at: number; active: number; n: number; chars: number }>(
        `SELECT s.id, s.title, s.created_at, s.updated_at, s.active,
                (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) n,
                (SELECT COALESCE(SUM(LENGTH(m.content)), 0) FROM messages m WHERE m.session_id = s.id) chars
         FROM sessions s ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?`,
      ),
      search: db.prepare<[string, string, number], { session_id: string; title: string | null; role: 'user' | 'assistant'; snippet: string; created_at: number }>(
        `SELECT f.session_id, s.title, f.role, snippet(messages_fts, 0, '«', '»', '…', 24) snippet, m.created_at
         FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = f.session_id
         WHERE messages_fts MATCH ? AND f.person_id = ?
         ORDER BY bm25(messages_fts) LIMIT ?`,
      ),
      searchIn: db.prepare<[string, string, string, number], { session_id: string; title: string | null; role: 'user' | 'assistant'; snippet: string; created_at: number }>(
        `SELECT f.session_id, s.title, f.role, snippet(messages_fts, 0, '«', '»', '…', 24) snippet, m.created_at
         FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = f.session_id
         WHERE messages_fts MATCH ? AND f.person_id = ? AND s.session_key = ?
         ORDER BY bm25(messages_fts) LIMIT ?`,
      ),
      owner: db.prepare<[string], { person_id: string | null; title: string | null }>('SELECT person_id, title FROM sessions WHERE id = ?'),
      messages: db.prepare<[string], { role: 'user' | 'assistant'; content: string; created_at: number }>(
        'SELECT role, content, created_at FROM messages WHERE session_id = ? ORDER BY id',
      ),
    };
  }

  list(personId: string | null, limit = 20): SessionSummary[] {
    const rows = personId === null ? this.statements.listAll.all(limit) : this.statements.list.all(personId, limit);
    return rows.map((row) => ({
      id: row.id,
      title: row.title ?? '(untitled)',
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      messages: row.n,
      chars: row.chars,
      active: row.active === 1,
    }));
  }

  search(personId: string, query: string, limit = 5, sessionKey?: string): SessionHit[] {
    const match = ftsQuery(query);
    if (!match) return [];
    this.index.flush();
    const rows = sessionKey === undefined ? this.statements.search.all(match, personId, limit) : this.statements.searchIn.all(match, personId, sessionKey, limit);
    return rows.map((row) => ({
      sessionId: row.session_id,
      title: row.title ?? '(untitled)',
      role: row.role,
      snippet: row.snippet,
      at: row.created_at,
    }));
  }

  messages(personId: string | null, sessionId: string): ReturnType<SessionArchive['messages']> {
    const owner = this.statements.owner.get(sessionId);
    if (!owner || (personId !== null && owner.person_id !== personId)) return undefined;
    const messages = this.statements.messages.all(sessionId).map((row) => ({ role: row.role, content: JSON.parse(row.content) as Message['content'], at: row.created_at }));
    return { title: owner.title ?? '(untitled)', messages };
  }
}

/**
 * A question in plain words as an FTS5 query: its meaningful words, each as a prefix, any of
 * them matching (bm25 ranks documents with more of them first). Never raw FTS syntax.
 * Numbers match exactly ("project 5" is not "project 50"); words also by their prefix.
 */
export function ftsQuery(question: string): string {
  return archiveWords(question).map((word) => (/^\d+$/.test(word) ? `"${word}"` : `"${word}"*`)).join(' OR ');
}
