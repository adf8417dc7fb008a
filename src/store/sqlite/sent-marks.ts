import type { Statement } from 'better-sqlite3';
import { DelayedWrite } from '../../core/delayed-write.js';
import type { Db } from './db.js';

/** More sends than any burst keeps in flight at once (see `inFlight`). */
const MAX_IN_FLIGHT = 10_000;

/** A delivery the platform accepted, its mark not yet written: its platform id, when, its row. */
type SentMark = [platformMessageId: string, sentAt: number, id: number];

/**
 * The outbox's "sent" marks (outbox.ts), grouped while sends are in flight.
 *
 * While other sends of this process are in flight (many people answered at once), a mark
 * waits for the next one to land, at most until the end of the event loop's turn or the next
 * commit (the store's outermost transaction carries it: `writeWithCommit`), and the marks go in
 * one commit: a commit writes every page it changed to the WAL (the row's and both status
 * indexes'), and these marks share them. With no other send in flight a mark is written at
 * once, so a quick answer leaves no window a kill could fall in beyond the one between the
 * platform's answer and the mark. Nothing waits on a waiting mark (its row stays leased, so no
 * retry takes it); the outbox writes the waiting marks before any other use, so no reader sees
 * the delay. A kill before they are written leaves what a kill between the platform's answer
 * and the mark leaves: a leased row, looked up in the chat after the restart
 * (delivery-recovery.ts).
 */
export class SentMarks {
  private readonly marks: SentMark[] = [];
  private readonly later: DelayedWrite;
  /** Rows this process leased for a send and has not settled yet: sends in flight, about. */
  private readonly inFlight = new Set<number>();

  constructor(
    private readonly db: Db,
    /** Told when writing the marks at the end of a turn fails (nothing else would hear); they wait for the next write. */
    onFlushError: (error: unknown) => void,
  ) {
    this.later = new DelayedWrite(0, () => this.flush(), onFlushError);
  }

  /** Whether any mark waits. */
  get waiting(): boolean {
    return this.marks.length > 0;
  }

  /** A send of row `id` is under way (its row was added or leased for it). */
  sending(id: number): void {
    // A row whose transaction was rolled back never settles: past this many "in flight" the
    // count is wrong, and starting over only makes the next marks immediate again.
    if (this.inFlight.size >= MAX_IN_FLIGHT) this.inFlight.clear();
    this.inFlight.add(id);
  }

  /** Row `id`'s send ended without a mark (a retry, a failure, a withdrawal). */
  ended(id: number): void {
    this.inFlight.delete(id);
  }

  /** The platform accepted row `id`: its mark waits while other sends are in flight, else is written now. */
  sent(id: number, platformMessageId: string, now: number): void {
    // A fact about the chat, not part of a caller's transaction: its rollback does not unsay it.
    this.marks.push([platformMessageId, now, id]);
    this.inFlight.delete(id);
    if (this.inFlight.size === 0) this.flush();
    else this.later.schedule();
  }

  /** Writes the marks waiting, in one commit (before any other use of the outbox, on close). */
  flush(): void {
    if (this.marks.length === 0 || !this.db.open) return;
    const mark = this.markStatement();
    if (this.db.inTransaction) {
      // Inside a caller's transaction: written with it, so what it reads next sees them, and
      // kept, so its rollback cannot lose them; the end of the turn writes them again.
      for (const row of this.marks) mark.run(...row);
      this.later.schedule();
      return;
    }
    this.later.cancel();
    const marks = this.marks.splice(0);
    try {
      this.db.transaction(() => {
        for (const row of marks) mark.run(...row);
      }).immediate();
    } catch (error) {
      // Kept for the next write: a mark lost would let the row be sent again once its lease ran out.
      this.marks.unshift(...marks);
      throw error;
    }
  }

  /**
   * Writes the waiting marks inside the outermost transaction about to commit (the store's
   * `transaction`, after its work): they go to the WAL with its pages instead of in a commit of
   * their own at the end of the turn. Returns how many it wrote, for `settled` once it committed.
   */
  writeWithCommit(): number {
    if (this.marks.length === 0) return 0;
    const mark = this.markStatement();
    for (const row of this.marks) mark.run(...row);
    return this.marks.length;
  }

  /** The transaction that carried the first `count` waiting marks committed: they are written. (A rollback leaves them waiting.) */
  settled(count: number): void {
    if (count === 0) return;
    this.marks.splice(0, count);
    if (this.marks.length === 0) this.later.cancel();
  }

  // Writing a mark twice changes nothing: `attempts` counts the send once.
  private markStatement(): Statement<SentMark> {
    return this.db.prepare<SentMark>(
      "UPDATE outbox SET status = 'sent', platform_message_id = ?, sent_at = ?, attempts = attempts + (status <> 'sent'), unconfirmed = 0 WHERE id = ?",
    );
  }
}
