import type { Db } from './db.js';

export type OutboxRow = {
  id: number;
  platform: string;
  chatId: string;
  threadId: string | null;
  sessionKey: string | null;
  /** The OutboundMessage as JSON (files are base64). */
  message: string;
  attempts: number;
  /** Parts of a split message already in the chat: a retry sends only the rest. */
  partsSent: number;
};

/** Every outgoing message, recorded before it is sent and marked with the platform id after. */
export class OutboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records a delivery. The caller sends it at once, so it is leased until `leaseUntil`: the
   * retry worker does not pick it up while that first send is in flight.
   */
  add(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; message: string; now: number; leaseUntil?: number }): number {
    const result = this.db
      .prepare(
        `INSERT INTO outbox (platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, created_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
      )
      .run(entry.platform, entry.chatId, entry.threadId ?? null, entry.sessionKey ?? null, entry.message, entry.leaseUntil ?? entry.now, entry.now);
    return Number(result.lastInsertRowid);
  }

  markSent(id: number, platformMessageId: string, now: number): void {
    this.db.prepare("UPDATE outbox SET status = 'sent', platform_message_id = ?, sent_at = ?, attempts = attempts + 1 WHERE id = ?").run(platformMessageId, now, id);
  }

  /** issue 7: parts of a split message already in the chat, recorded as each one lands. */
  markPartsSent(id: number, partsSent: number): void {
    this.db.prepare('UPDATE outbox SET parts_sent = max(parts_sent, ?) WHERE id = ?').run(partsSent, id);
  }

  markRetry(id: number, error: string, nextAttemptAt: number, partsSent = 0): void {
    this.db
      .prepare('UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, parts_sent = max(parts_sent, ?) WHERE id = ?')
      .run(error, nextAttemptAt, partsSent, id);
  }

  /** Withdraws a delivery that has not gone out yet (its message no longer makes sense). */
  cancel(id: number, reason: string): boolean {
    return this.db.prepare("UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'").run(reason, id).changes === 1;
  }

  markFailed(id: number, error: string): void {
    this.db.prepare("UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?").run(error, id);
  }

  /** Leases a row for one send attempt; false when another attempt holds it. */
  lease(id: number, now: number, until: number): boolean {
    return this.db.prepare("UPDATE outbox SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at <= ?").run(until, id, now).changes === 1;
  }

  /** At start-up no send is in flight: every pending delivery is due now. */
  releaseLeases(now: number): void {
    this.db.prepare("UPDATE outbox SET next_attempt_at = ? WHERE status = 'pending' AND next_attempt_at > ?").run(now, now);
  }

  /**
   * Whether an earlier message to the same chat waits to be sent (it failed, or it waits in
   * line): this one must wait behind it, or the person would read the answer out of order.
   * A first attempt in flight does not hold others back; a deferred or failed one does, also
   * while the worker is sending it (it carries a last_error).
   */
  blockedBy(id: number, platform: string, chatId: string, now: number): boolean {
    return (
      this.db
        .prepare<[string, string, number, number], { n: number }>(
          "SELECT COUNT(*) n FROM outbox WHERE platform = ? AND chat_id = ? AND id < ? AND status = 'pending' AND (attempts > 0 OR last_error IS NOT NULL OR next_attempt_at <= ?)",
        )
        .get(platform, chatId, id, now)?.n !== 0
    );
  }

  /** Leaves a delivery to the worker without counting an attempt (it waits in line). */
  defer(id: number, reason: string, nextAttemptAt: number): void {
    this.db.prepare('UPDATE outbox SET last_error = ?, next_attempt_at = ? WHERE id = ?').run(reason, nextAttemptAt, id);
  }

  /** Pending deliveries that are due, oldest first. */
  due(now: number, limit = 50): OutboxRow[] {
    return this.db
      .prepare<
        [number, number],
        { id: number; platform: string; chat_id: string; thread_id: string | null; session_key: string | null; message: string; attempts: number; parts_sent: number }
      >("SELECT id, platform, chat_id, thread_id, session_key, message, attempts, parts_sent FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY id LIMIT ?")
      .all(now, limit)
      .map((row) => ({
        id: row.id,
        platform: row.platform,
        chatId: row.chat_id,
        threadId: row.thread_id,
        sessionKey: row.session_key,
        message: row.message,
        attempts: row.attempts,
        partsSent: row.parts_sent,
      }));
  }

  counts(): Record<'pending' | 'sent' | 'failed', number> {
    const rows = this.db.prepare<[], { status: 'pending' | 'sent' | 'failed'; n: number }>('SELECT status, COUNT(*) n FROM outbox GROUP BY status').all();
    const counts = { pending: 0, sent: 0, failed: 0 };
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }
}
