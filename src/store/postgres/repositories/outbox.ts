/** The outbox on PostgreSQL (the port: ../../outbox.ts). */
import type { EncodedMessage } from '../../outbox-message.js';
import type { LiveRow, OutboxRepository, OutboxRow, OutboxStatus } from '../../outbox.js';
import type { Sql } from '../sql.js';
import type { Claimant } from './cluster.js';

type Where = { id: number; platform: string; chat_id: string; thread_id: string | null; session_key: string | null };
const whereOf = (row: Where) => ({ id: row.id, platform: row.platform, chatId: row.chat_id, threadId: row.thread_id, sessionKey: row.session_key });

/**
 * A send in flight is claimed by its node (`lease_node`) as well as by time: when the node
 * stops or dies, its claims are released at once (cluster.ts) rather than when the time runs out.
 */
export class PostgresOutbox implements OutboxRepository {
  constructor(
    private readonly sql: Sql,
    private readonly claimant: Claimant = { nodeId: undefined },
  ) {}

  private get node(): string | null {
    return this.claimant.nodeId ?? null;
  }

  add(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; message: EncodedMessage; now: number; leaseUntil?: number }): number {
    return this.sql.get<{ id: number }>(
      `INSERT INTO outbox (platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, created_at, attempted_at, lease_node)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?) RETURNING id`,
      entry.platform, entry.chatId, entry.threadId ?? null, entry.sessionKey ?? null, entry.message, entry.leaseUntil ?? entry.now, entry.now, entry.leaseUntil === undefined ? null : entry.now, entry.leaseUntil === undefined ? null : this.node,
    )!.id;
  }

  markSent(id: number, platformMessageId: string, now: number): void {
    this.sql.run("UPDATE outbox SET status = 'sent', platform_message_id = ?, sent_at = ?, attempts = attempts + 1, unconfirmed = false, lease_node = NULL WHERE id = ?", platformMessageId, now, id);
  }

  markPartsSent(id: number, partsSent: number): void {
    this.sql.run('UPDATE outbox SET parts_sent = greatest(parts_sent, ?) WHERE id = ?', partsSent, id);
  }

  markRetry(id: number, error: string, nextAttemptAt: number, partsSent = 0): void {
    this.sql.run('UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, parts_sent = greatest(parts_sent, ?), unconfirmed = true, lease_node = NULL WHERE id = ?', error, nextAttemptAt, partsSent, id);
  }

  confirm(id: number, partsSent: number): void {
    this.sql.run('UPDATE outbox SET unconfirmed = false, parts_sent = greatest(parts_sent, ?) WHERE id = ?', partsSent, id);
  }

  cancel(id: number, reason: string): boolean {
    return this.sql.run("UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'", reason, id) === 1;
  }

  markFailed(id: number, error: string): void {
    this.sql.run("UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?", error, id);
  }

  lease(id: number, now: number, until: number): boolean {
    // SKIP LOCKED: a row another process is claiming this instant is left to it, without waiting.
    return (
      this.sql.run(
        "UPDATE outbox SET next_attempt_at = ?, attempted_at = ?, lease_node = ? WHERE id = (SELECT id FROM outbox WHERE id = ? AND status = 'pending' AND next_attempt_at <= ? FOR UPDATE SKIP LOCKED)",
        until, now, this.node, id, now,
      ) === 1
    );
  }

  releaseLeases(now: number): void {
    this.sql.run("UPDATE outbox SET next_attempt_at = ?, unconfirmed = (attempted_at IS NOT NULL OR unconfirmed), lease_node = NULL WHERE status = 'pending' AND next_attempt_at > ?", now, now);
  }

  createdAt(id: number): number | undefined {
    return this.sql.get<{ created_at: number }>('SELECT created_at FROM outbox WHERE id = ?', id)?.created_at;
  }

  answerRecordedBefore(sessionKey: string, beforeId: number, since: number): boolean {
    return this.sql.get<{ one: number }>("SELECT 1 one FROM outbox WHERE session_key = ? AND id < ? AND created_at >= ? AND status NOT IN ('live', 'withdrawn') LIMIT 1", sessionKey, beforeId, since) !== undefined;
  }

  knownIds(platform: string, chatId: string, since: number): Set<string> {
    return new Set(this.sql.all<{ id: string }>('SELECT platform_message_id id FROM outbox WHERE platform = ? AND chat_id = ? AND platform_message_id IS NOT NULL AND created_at >= ?', platform, chatId, since).map((row) => row.id));
  }

  addLive(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; preview: string; now: number }): number {
    return this.sql.get<{ id: number }>(
      `INSERT INTO outbox (platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, created_at, attempted_at, preview)
       VALUES (?, ?, ?, ?, '', 'live', 0, ?, ?, ?, ?) RETURNING id`,
      entry.platform, entry.chatId, entry.threadId ?? null, entry.sessionKey ?? null, entry.now, entry.now, entry.now, entry.preview,
    )!.id;
  }

  setLiveMessage(id: number, platformMessageId: string): void {
    this.sql.run("UPDATE outbox SET platform_message_id = ? WHERE id = ? AND status = 'live'", platformMessageId, id);
  }

  setLiveAnswer(id: number, message: EncodedMessage): void {
    this.sql.run("UPDATE outbox SET message = ? WHERE id = ? AND status = 'live'", message, id);
  }

  withdrawLive(id: number): void {
    this.sql.run("UPDATE outbox SET status = 'withdrawn' WHERE id = ? AND status = 'live'", id);
  }

  liveToPending(id: number, now: number, leaseUntil: number): void {
    this.sql.run("UPDATE outbox SET status = 'pending', platform_message_id = NULL, next_attempt_at = ?, attempted_at = ?, lease_node = ? WHERE id = ? AND status = 'live'", leaseUntil, now, this.node, id);
  }

  liveRows(): LiveRow[] {
    return this.sql
      .all<Where & { platform_message_id: string | null; message: EncodedMessage | ''; preview: string | null; created_at: number }>(
        "SELECT id, platform, chat_id, thread_id, session_key, platform_message_id, message, preview, created_at FROM outbox WHERE status = 'live' ORDER BY id",
      )
      .map((row) => ({ ...whereOf(row), platformMessageId: row.platform_message_id ?? undefined, preview: row.preview ?? '', createdAt: row.created_at, answer: row.message === '' ? undefined : row.message }));
  }

  blockedBy(id: number, platform: string, chatId: string, now: number): boolean {
    return this.sql.get("SELECT 1 FROM outbox WHERE platform = ? AND chat_id = ? AND id < ? AND status = 'pending' AND (attempts > 0 OR last_error IS NOT NULL OR next_attempt_at <= ?) LIMIT 1", platform, chatId, id, now) !== undefined;
  }

  defer(id: number, reason: string, nextAttemptAt: number): void {
    this.sql.run('UPDATE outbox SET last_error = ?, next_attempt_at = ?, lease_node = NULL WHERE id = ?', reason, nextAttemptAt, id);
  }

  due(now: number, limit = 50): OutboxRow[] {
    return this.sql
      .all<Where & { message: EncodedMessage; attempts: number; parts_sent: number; unconfirmed: boolean; created_at: number; attempted_at: number | null }>(
        "SELECT id, platform, chat_id, thread_id, session_key, message, attempts, parts_sent, unconfirmed, created_at, attempted_at FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY id LIMIT ?",
        now, limit,
      )
      .map((row) => ({ ...whereOf(row), message: row.message, attempts: row.attempts, partsSent: row.parts_sent, unconfirmed: row.unconfirmed, createdAt: row.created_at, attemptedAt: row.attempted_at }));
  }

  counts(): Record<OutboxStatus, number> {
    const counts = { pending: 0, sent: 0, failed: 0, live: 0, withdrawn: 0 };
    for (const row of this.sql.all<{ status: OutboxStatus; n: number }>('SELECT status, count(*) n FROM outbox GROUP BY status')) counts[row.status] = row.n;
    return counts;
  }
}
