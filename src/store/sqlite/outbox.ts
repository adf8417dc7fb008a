import type { EncodedMessage } from '../outbox-message.js';
import type { LiveRow, OutboxRepository, OutboxRow, OutboxStatus } from '../outbox.js';
import type { Db } from './db.js';
import { SentMarks } from './sent-marks.js';

type DueRowDb = {
  id: number; platform: string; chat_id: string; thread_id: string | null; session_key: string | null; message: EncodedMessage; attempts: number; parts_sent: number;
  unconfirmed: number; created_at: number; attempted_at: number | null;
};

/**
 * The outbox on SQLite (the port: ../outbox.ts). Its "sent" marks are grouped while sends are
 * in flight (sent-marks.ts); every method writes the waiting ones first, so no reader sees them wait.
 */
export class SqliteOutbox implements OutboxRepository {
  private readonly marks: SentMarks;

  constructor(
    private readonly db: Db,
    /** Told when writing the marks at the end of a turn fails (nothing else would hear); they wait for the next write. */
    onFlushError: (error: unknown) => void = () => undefined,
  ) {
    this.marks = new SentMarks(db, onFlushError);
  }

  /** Writes the sent marks waiting, in one commit (before any other use of the outbox, on close). */
  flush(): void {
    this.marks.flush();
  }

  /** The waiting marks written inside the outermost transaction about to commit (SentMarks.writeWithCommit). */
  writeWithCommit(): number {
    return this.marks.writeWithCommit();
  }

  /** The transaction that carried `count` waiting marks committed (SentMarks.settled). */
  settled(count: number): void {
    this.marks.settled(count);
  }

  /**
   * Records a delivery. The caller sends it at once, so it is leased until `leaseUntil`: the
   * retry worker does not pick it up while that first send is in flight.
   */
  add(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; message: EncodedMessage; now: number; leaseUntil?: number }): number {
    const result = this.db
      .prepare(
        `INSERT INTO outbox (platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, created_at, attempted_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
      )
      .run(entry.platform, entry.chatId, entry.threadId ?? null, entry.sessionKey ?? null, entry.message, entry.leaseUntil ?? entry.now, entry.now, entry.leaseUntil === undefined ? null : entry.now);
    const id = Number(result.lastInsertRowid);
    if (entry.leaseUntil !== undefined) this.marks.sending(id);
    return id;
  }

  /** The platform accepted it (its last part): from now on nothing sends it again. */
  markSent(id: number, platformMessageId: string, now: number): void {
    this.marks.sent(id, platformMessageId, now);
  }

  /** issue 7: parts of a split message already in the chat, recorded as each one lands. */
  markPartsSent(id: number, partsSent: number): void {
    this.flush();
    this.db.prepare('UPDATE outbox SET parts_sent = max(parts_sent, ?) WHERE id = ?').run(partsSent, id);
  }

  /** A failed attempt: the platform may still have taken its message, so it is looked up before the retry. */
  markRetry(id: number, error: string, nextAttemptAt: number, partsSent = 0): void {
    this.flush();
    this.marks.ended(id);
    this.db
      .prepare('UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, parts_sent = max(parts_sent, ?), unconfirmed = 1 WHERE id = ?')
      .run(error, nextAttemptAt, partsSent, id);
  }

  /** A look-up settled what an earlier attempt delivered: `partsSent` parts are in the chat, the rest are not. */
  confirm(id: number, partsSent: number): void {
    this.flush();
    this.db.prepare('UPDATE outbox SET unconfirmed = 0, parts_sent = max(parts_sent, ?) WHERE id = ?').run(partsSent, id);
  }

  /** Withdraws a delivery that has not gone out yet (its message no longer makes sense). */
  cancel(id: number, reason: string): boolean {
    this.flush();
    this.marks.ended(id);
    return this.db.prepare("UPDATE outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'").run(reason, id).changes === 1;
  }

  markFailed(id: number, error: string): void {
    this.flush();
    this.marks.ended(id);
    this.db.prepare("UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?").run(error, id);
  }

  /** Leases a row for one send attempt; false when another attempt holds it. */
  lease(id: number, now: number, until: number): boolean {
    this.flush();
    const leased = this.db.prepare("UPDATE outbox SET next_attempt_at = ?, attempted_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at <= ?").run(until, now, id, now).changes === 1;
    if (leased) this.marks.sending(id);
    return leased;
  }

  /**
   * At start-up no send is in flight: every pending delivery is due now. One the previous
   * process was sending (leased) may have reached the chat before it died: it is unconfirmed.
   */
  releaseLeases(now: number): void {
    this.flush();
    this.db
      .prepare("UPDATE outbox SET next_attempt_at = ?, unconfirmed = CASE WHEN attempted_at IS NULL THEN unconfirmed ELSE 1 END WHERE status = 'pending' AND next_attempt_at > ?")
      .run(now, now);
  }

  /** When a row was recorded (a part of its delivery key). */
  createdAt(id: number): number | undefined {
    this.flush();
    return this.db.prepare<[number], { created_at: number }>('SELECT created_at FROM outbox WHERE id = ?').get(id)?.created_at;
  }

  /** A row of the session's answer (not a live message) recorded since `since` and before row `beforeId`. */
  answerRecordedBefore(sessionKey: string, beforeId: number, since: number): boolean {
    this.flush();
    return (
      this.db
        .prepare<[string, number, number], { one: number }>("SELECT 1 one FROM outbox WHERE session_key = ? AND id < ? AND created_at >= ? AND status NOT IN ('live', 'withdrawn') LIMIT 1")
        .get(sessionKey, beforeId, since) !== undefined
    );
  }

  /** Message ids hob recorded in a chat since `since`: never taken for another row's message. */
  knownIds(platform: string, chatId: string, since: number): Set<string> {
    this.flush();
    const rows = this.db
      .prepare<[string, string, number], { id: string }>('SELECT platform_message_id id FROM outbox WHERE platform = ? AND chat_id = ? AND platform_message_id IS NOT NULL AND created_at >= ?')
      .all(platform, chatId, since);
    return new Set(rows.map((row) => row.id));
  }

  /**
   * A live message about to be created in the chat, recorded before the platform call, with
   * what it will show: a crash leaves the row, and the restart finds the message (by the key
   * it carries, or by that text), then turns it into the answer or removes it.
   */
  addLive(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; preview: string; now: number }): number {
    const result = this.db
      .prepare(
        `INSERT INTO outbox (platform, chat_id, thread_id, session_key, message, status, attempts, next_attempt_at, created_at, attempted_at, preview)
         VALUES (?, ?, ?, ?, '', 'live', 0, ?, ?, ?, ?)`,
      )
      .run(entry.platform, entry.chatId, entry.threadId ?? null, entry.sessionKey ?? null, entry.now, entry.now, entry.now, entry.preview);
    return Number(result.lastInsertRowid);
  }

  /** The platform accepted the live message: its id, the moment it is known. */
  setLiveMessage(id: number, platformMessageId: string): void {
    this.flush();
    this.db.prepare("UPDATE outbox SET platform_message_id = ? WHERE id = ? AND status = 'live'").run(platformMessageId, id);
  }

  /** The answer the live message is to become (its first message), recorded before it is asked to. */
  setLiveAnswer(id: number, message: EncodedMessage): void {
    this.flush();
    this.db.prepare("UPDATE outbox SET message = ? WHERE id = ? AND status = 'live'").run(message, id);
  }

  /** The live message is gone (removed, or it never became the answer). */
  withdrawLive(id: number): void {
    this.flush();
    this.db.prepare("UPDATE outbox SET status = 'withdrawn' WHERE id = ? AND status = 'live'").run(id);
  }

  /** The live message did not become its answer: the answer is sent as an ordinary message, leased to the caller. */
  liveToPending(id: number, now: number, leaseUntil: number): void {
    this.flush();
    this.db
      .prepare("UPDATE outbox SET status = 'pending', platform_message_id = NULL, next_attempt_at = ?, attempted_at = ? WHERE id = ? AND status = 'live'")
      .run(leaseUntil, now, id);
  }

  /** Live messages still recorded as showing (at start-up: what a crash left in the chats). */
  liveRows(): LiveRow[] {
    this.flush();
    return this.db
      .prepare<[], { id: number; platform: string; chat_id: string; thread_id: string | null; session_key: string | null; platform_message_id: string | null; message: EncodedMessage | ''; preview: string | null; created_at: number }>(
        "SELECT id, platform, chat_id, thread_id, session_key, platform_message_id, message, preview, created_at FROM outbox WHERE status = 'live' ORDER BY id",
      )
      .all()
      .map((row) => ({
        ...whereOf(row),
        platformMessageId: row.platform_message_id ?? undefined,
        preview: row.preview ?? '',
        createdAt: row.created_at,
        answer: row.message === '' ? undefined : row.message,
      }));
  }

  /**
   * Whether an earlier message to the same chat waits to be sent (it failed, or it waits in
   * line): this one must wait behind it, or the person would read the answer out of order.
   * A first attempt in flight does not hold others back; a deferred or failed one does, also
   * while the worker is sending it (it carries a last_error).
   */
  blockedBy(id: number, platform: string, chatId: string, now: number): boolean {
    const count = () =>
      this.db
        .prepare<[string, string, number, number], { n: number }>(
          "SELECT COUNT(*) n FROM outbox WHERE platform = ? AND chat_id = ? AND id < ? AND status = 'pending' AND (attempts > 0 OR last_error IS NOT NULL OR next_attempt_at <= ?)",
        )
        .get(platform, chatId, id, now)?.n !== 0;
    // Only a row that blocks could be one whose retry landed and waits for its mark: then look again.
    if (!count()) return false;
    if (!this.marks.waiting) return true;
    this.flush();
    return count();
  }

  /** Leaves a delivery to the worker without counting an attempt (it waits in line). */
  defer(id: number, reason: string, nextAttemptAt: number): void {
    this.flush();
    this.marks.ended(id);
    this.db.prepare('UPDATE outbox SET last_error = ?, next_attempt_at = ? WHERE id = ?').run(reason, nextAttemptAt, id);
  }

  /** Pending deliveries that are due, oldest first. */
  due(now: number, limit = 50): OutboxRow[] {
    this.flush();
    return this.db
      .prepare<[number, number], DueRowDb>(
        "SELECT id, platform, chat_id, thread_id, session_key, message, attempts, parts_sent, unconfirmed, created_at, attempted_at FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY id LIMIT ?",
      )
      .all(now, limit)
      .map((row) => ({
        ...whereOf(row),
        message: row.message,
        attempts: row.attempts,
        partsSent: row.parts_sent,
        unconfirmed: row.unconfirmed === 1,
        createdAt: row.created_at,
        attemptedAt: row.attempted_at,
      }));
  }

  counts(): Record<OutboxStatus, number> {
    this.flush();
    const rows = this.db.prepare<[], { status: OutboxStatus; n: number }>('SELECT status, COUNT(*) n FROM outbox GROUP BY status').all();
    const counts = { pending: 0, sent: 0, failed: 0, live: 0, withdrawn: 0 };
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }
}

/** A row's id and where it goes, as the repository hands them out. */
function whereOf(row: { id: number; platform: string; chat_id: string; thread_id: string | null; session_key: string | null }) {
  return { id: row.id, platform: row.platform, chatId: row.chat_id, threadId: row.thread_id, sessionKey: row.session_key };
}
