import type { InboxRepository, QueuedInbound } from '../inbox.js';
import type { Db } from './db.js';

/** The inbox on SQLite (the port: ../inbox.ts). */
export class SqliteInbox implements InboxRepository {
  constructor(private readonly db: Db) {}

  add(entry: { platform: string; updateId: string; sessionKey: string; message: string; now: number }): number | undefined {
    const result = this.db
      .prepare("INSERT OR IGNORE INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)")
      .run(entry.platform, entry.updateId, entry.sessionKey, entry.message, entry.now);
    return result.changes === 1 ? Number(result.lastInsertRowid) : undefined;
  }

  addDone(entry: { platform: string; updateId: string; sessionKey: string; now: number }): boolean {
    return (
      this.db
        .prepare("INSERT OR IGNORE INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, '', 'done', ?)")
        .run(entry.platform, entry.updateId, entry.sessionKey, entry.now).changes === 1
    );
  }

  latestFor(sessionKey: string): string | undefined {
    return this.db
      .prepare<[string], { message: string }>("SELECT message FROM inbox WHERE session_key = ? AND status = 'done' AND message != '' ORDER BY id DESC LIMIT 1")
      .get(sessionKey)?.message;
  }

  markDone(id: number): void {
    this.db.prepare("UPDATE inbox SET status = 'done' WHERE id = ?").run(id);
  }

  markDoneWith(ids: number[], work: () => void): void {
    this.db.transaction(() => {
      work();
      for (const id of ids) this.markDone(id);
    })();
  }

  queued(): QueuedInbound[] {
    return this.db
      .prepare<[], { id: number; platform: string; session_key: string; message: string; batch: number | null }>(
        "SELECT id, platform, session_key, message, batch FROM inbox WHERE status = 'queued' ORDER BY id",
      )
      .all()
      .map((row) => ({ id: row.id, platform: row.platform, sessionKey: row.session_key, message: row.message, batch: row.batch }));
  }

  queuedFor(sessionKey: string): QueuedInbound[] {
    return this.db
      .prepare<[string], { id: number; platform: string; session_key: string; message: string; batch: number | null }>(
        "SELECT id, platform, session_key, message, batch FROM inbox WHERE status = 'queued' AND session_key = ? ORDER BY id",
      )
      .all(sessionKey)
      .map((row) => ({ id: row.id, platform: row.platform, sessionKey: row.session_key, message: row.message, batch: row.batch }));
  }

  setBatch(ids: number[]): void {
    const [first] = ids;
    if (first === undefined) return;
    const mark = this.db.prepare('UPDATE inbox SET batch = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) mark.run(first, id);
    })();
  }
}
