/**
 * Session search's index of messages (messages_fts, FTS5), written in batches. FTS5 writes a
 * segment of its index for every transaction that adds to it (and merges them as they pile
 * up): one row a commit cost ~100 µs of CPU more than the same commit without it, most of a
 * new person's first answer's share of SQLite (two rows: their message and the answer). So a
 * message's search row waits in a plain table (`messages_fts_waiting`, written in the
 * message's own commit: nothing is lost when hob is killed) and goes into the index with the
 * others waiting, in one transaction a moment later. Every search, link and copy moves the
 * waiting rows first, so nobody sees the delay; a row left by a kill is moved by the next one.
 */
import { DelayedWrite } from '../../core/delayed-write.js';
import type { Db } from './db.js';

/** Waiting rows are moved into the index this long after the first of them was written. */
const INDEX_AFTER_MS = 1000;

/** One message's search row: its words, whose they are, its session and role. */
export type SearchRow = { messageId: number; text: string; personId: string; sessionId: string; role: string };

/**
 * Moves every waiting row into the index, in one transaction (one FTS5 segment for all of
 * them). Safe beside another process doing the same: the move and the delete commit together.
 */
export function indexWaitingMessages(db: Db): void {
  db.transaction(() => {
    if (!db.prepare('SELECT 1 FROM messages_fts_waiting LIMIT 1').get()) return;
    db.prepare('INSERT INTO messages_fts (rowid, text, person_id, session_id, role) SELECT message_id, text, person_id, session_id, role FROM messages_fts_waiting ORDER BY message_id').run();
    db.prepare('DELETE FROM messages_fts_waiting').run();
  }).immediate();
}

export class MessageIndex {
  private readonly statements;
  private readonly later: DelayedWrite;

  constructor(
    private readonly db: Db,
    /** Told when a delayed move fails (it runs on a timer, so nothing else would hear); the rows wait for the next. */
    onFlushError: (error: unknown) => void = () => undefined,
  ) {
    this.later = new DelayedWrite(INDEX_AFTER_MS, () => this.flush(), onFlushError);
    this.statements = {
      wait: db.prepare('INSERT INTO messages_fts_waiting (message_id, text, person_id, session_id, role) VALUES (?, ?, ?, ?, ?)'),
      reassign: db.prepare('UPDATE messages_fts_waiting SET person_id = ? WHERE person_id = ?'),
    };
  }

  /** Stores a message's search row (in the caller's transaction); it reaches the index a moment later. */
  add(row: SearchRow): void {
    this.statements.wait.run(row.messageId, row.text, row.personId, row.sessionId, row.role);
    this.later.schedule();
  }

  /** Moves the waiting rows into the index now (before a search, on close). */
  flush(): void {
    this.later.cancel();
    if (this.db.open) indexWaitingMessages(this.db);
  }

  /** The rows still waiting that belong to `from` belong to `to` now (a link; in the caller's transaction). */
  reassign(from: string, to: string): void {
    this.statements.reassign.run(to, from);
  }
}
