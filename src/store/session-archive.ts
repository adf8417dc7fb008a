/**
 * A person's past sessions: listing, full-text search over their own messages, and the whole
 * record of one session for `hob sessions show | export`. Every query is scoped to one person;
 * another person's session is "not found", never shown.
 */
import type { Message } from '../core/messages.js';
import type { Db } from './db.js';

export type SessionSummary = {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messages: number;
  /** Characters of text stored (a rough size; tokens are about a quarter). */
  chars: number;
  active: boolean;
};

export type SessionHit = {
  sessionId: string;
  title: string;
  role: 'user' | 'assistant';
  snippet: string;
  at: number;
};

export type StoredMessage = { role: 'user' | 'assistant'; content: Message['content']; at: number };

export class SessionArchive {
  private readonly statements;

  constructor(db: Db) {
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

  /** The person's sessions, newest first. `personId: null` lists everyone's (the owner at the terminal, `--all`). */
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

  /**
   * Full-text search over the person's own messages, best matches first; with `sessionKey`,
   * only in that conversation's sessions (a group: nothing private from elsewhere).
   */
  search(personId: string, query: string, limit = 5, sessionKey?: string): SessionHit[] {
    const match = ftsQuery(query);
    if (!match) return [];
    const rows = sessionKey === undefined ? this.statements.search.all(match, personId, limit) : this.statements.searchIn.all(match, personId, sessionKey, limit);
    return rows.map((row) => ({
      sessionId: row.session_id,
      title: row.title ?? '(untitled)',
      role: row.role,
      snippet: row.snippet,
      at: row.created_at,
    }));
  }

  /** Every stored message of one session, if it is this person's (`null`: the owner, any session). */
  messages(personId: string | null, sessionId: string): { title: string; messages: StoredMessage[] } | undefined {
    const owner = this.statements.owner.get(sessionId);
    if (!owner || (personId !== null && owner.person_id !== personId)) return undefined;
    const messages = this.statements.messages.all(sessionId).map((row) => ({ role: row.role, content: JSON.parse(row.content) as Message['content'], at: row.created_at }));
    return { title: owner.title ?? '(untitled)', messages };
  }
}

const STOP_WORDS = new Set(
  'a an and are as at be but by did do does for from had has have how i in is it its me my of on or our so that the their them then there these they this to was we were what when where which who why will with you your about did we us'.split(' '),
);

/**
 * A question in plain words as an FTS5 query: its meaningful words, each as a prefix, any of
 * them matching (bm25 ranks documents with more of them first). Never raw FTS syntax.
 */
export function ftsQuery(question: string): string {
  const words = question
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((word) => (word.length > 1 || /\d/.test(word)) && !STOP_WORDS.has(word));
  // Numbers match exactly ("project 5" is not "project 50"); words also by their prefix.
  return [...new Set(words)].map((word) => (/^\d+$/.test(word) ? `"${word}"` : `"${word}"*`)).join(' OR ');
}
