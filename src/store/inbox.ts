import type { Db } from './db.js';

/**
 * Inbound messages, written when they arrive and marked done when their run has taken them.
 * The (platform, update_id) key makes a redelivered update a no-op, also across restarts.
 */
export class InboxRepository {
  constructor(private readonly db: Db) {}

  /** Returns the row id, or undefined when this update was seen before. */
  add(entry: { platform: string; updateId: string; sessionKey: string; message: string; now: number }): number | undefined {
    const result = this.db
      .prepare("INSERT OR IGNORE INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)")
      .run(entry.platform, entry.updateId, entry.sessionKey, entry.message, entry.now);
    return result.changes === 1 ? Number(result.lastInsertRowid) : undefined;
  }

  /** Records an update handled on the spot (a command); false when it was seen before. */
  addDone(entry: { platform: string; updateId: string; sessionKey: string; now: number }): boolean {
    return (
      this.db
        .prepare("INSERT OR IGNORE INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, '', 'done', ?)")
        .run(entry.platform, entry.updateId, entry.sessionKey, entry.now).changes === 1
    );
  }

  /** The newest message stored for a conversation (who wrote it, from what kind of chat). */
  latestFor(sessionKey: string): string | undefined {
    return this.db
      .prepare<[string], { message: string }>("SELECT message FROM inbox WHERE session_key = ? AND status = 'done' AND message != '' ORDER BY id DESC LIMIT 1")
      .get(sessionKey)?.message;
  }

  markDone(id: number): void {
    this.db.prepare("UPDATE inbox SET status = 'done' WHERE id = ?").run(id);
  }

  /**
   * Runs `work` (synchronous) and marks the rows done in the same commit: the engine storing
   * a person's message and its inbox rows' end are one write, not two.
   */
  markDoneWith(ids: number[], work: () => void): void {
    this.db.transaction(() => {
      work();
      for (const id of ids) this.markDone(id);
    })();
  }

  queued(): { id: number; platform: string; sessionKey: string; message: string; batch: number | null }[] {
    return this.db
      .prepare<[], { id: number; platform: string; session_key: string; message: string; batch: number | null }>(
        "SELECT id, platform, session_key, message, batch FROM inbox WHERE status = 'queued' ORDER BY id",
      )
      .all()
      .map((row) => ({ id: row.id, platform: row.platform, sessionKey: row.session_key, message: row.message, batch: row.batch }));
  }

  /** Marks rows as parts of one message (a long paste, an album): they are answered together. */
  setBatch(ids: number[]): void {
    const [first] = ids;
    if (first === undefined) return;
    const mark = this.db.prepare('UPDATE inbox SET batch = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) mark.run(first, id);
    })();
  }
}
