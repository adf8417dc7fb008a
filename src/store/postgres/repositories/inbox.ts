/** The inbox on PostgreSQL (the port: ../../inbox.ts). */
import type { InboxRepository, QueuedInbound } from '../../inbox.js';
import type { Sql } from '../sql.js';

export class PostgresInbox implements InboxRepository {
  constructor(private readonly sql: Sql) {}

  add(entry: { platform: string; updateId: string; sessionKey: string; message: string; now: number }): number | undefined {
    return this.sql.get<{ id: number }>(
      "INSERT INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?) ON CONFLICT (platform, update_id) DO NOTHING RETURNING id",
      entry.platform, entry.updateId, entry.sessionKey, entry.message, entry.now,
    )?.id;
  }

  addDone(entry: { platform: string; updateId: string; sessionKey: string; now: number }): boolean {
    return this.sql.run("INSERT INTO inbox (platform, update_id, session_key, message, status, created_at) VALUES (?, ?, ?, '', 'done', ?) ON CONFLICT (platform, update_id) DO NOTHING", entry.platform, entry.updateId, entry.sessionKey, entry.now) === 1;
  }

  latestFor(sessionKey: string): string | undefined {
    return this.sql.get<{ message: string }>("SELECT message FROM inbox WHERE session_key = ? AND status = 'done' AND message != '' ORDER BY id DESC LIMIT 1", sessionKey)?.message;
  }

  markDone(id: number): void {
    this.sql.run("UPDATE inbox SET status = 'done' WHERE id = ?", id);
  }

  markDoneWith(ids: number[], work: () => void): void {
    this.sql.transaction(() => {
      work();
      if (ids.length) this.sql.run("UPDATE inbox SET status = 'done' WHERE id = ANY(?::bigint[])", ids);
    });
  }

  queued(): QueuedInbound[] {
    return this.sql
      .all<{ id: number; platform: string; session_key: string; message: string; batch: number | null }>("SELECT id, platform, session_key, message, batch FROM inbox WHERE status = 'queued' ORDER BY id")
      .map((row) => ({ id: row.id, platform: row.platform, sessionKey: row.session_key, message: row.message, batch: row.batch }));
  }

  queuedFor(sessionKey: string): QueuedInbound[] {
    return this.sql
      .all<{ id: number; platform: string; session_key: string; message: string; batch: number | null }>("SELECT id, platform, session_key, message, batch FROM inbox WHERE status = 'queued' AND session_key = ? ORDER BY id", sessionKey)
      .map((row) => ({ id: row.id, platform: row.platform, sessionKey: row.session_key, message: row.message, batch: row.batch }));
  }

  setBatch(ids: number[]): void {
    const [first] = ids;
    if (first === undefined) return;
    this.sql.run('UPDATE inbox SET batch = ? WHERE id = ANY(?::bigint[])', first, ids);
  }
}
