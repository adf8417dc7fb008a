/**
 * Memory entries' use counts, written in batches: a search that finds entries counts a use of
 * each, but the write (and the WAL checkpoint it sometimes sets off, several ms) waits a
 * moment and goes with the other uses waiting, in one transaction, off the search's path.
 * Every read adds the waiting uses in, so nobody sees the delay.
 */
import type { Clock } from '../../core/clock.js';
import { DelayedWrite } from '../../core/delayed-write.js';
import type { MemoryEntry } from './entry.js';

/** Uses found by searches are written this long after the search. */
const USE_FLUSH_MS = 1000;
/** Past this many entries waiting, the search that adds more writes them at once. */
const MAX_PENDING_USES = 1000;

/** Uses of one entry not yet written: how many, and when the last was. */
export type PendingUse = { count: number; at: number };

export class PendingUses {
  /** seq → uses not yet written. */
  private readonly pending = new Map<number, PendingUse>();
  private readonly later: DelayedWrite;

  constructor(
    /** Writes the uses in one transaction (each entry's count added, its last use the later one); a store that is closed writes nothing. */
    private readonly write: (uses: [seq: number, use: PendingUse][]) => void,
    private readonly clock: Clock,
    /** Told when a delayed write fails (it runs on a timer, so nothing else would hear). */
    onFlushError: (error: unknown) => void,
  ) {
    this.later = new DelayedWrite(USE_FLUSH_MS, () => this.flush(), onFlushError);
  }

  /** Counts a use of each entry, written a moment later with the others waiting. */
  mark(seqs: number[]): void {
    if (seqs.length === 0) return;
    const now = this.clock.now();
    for (const seq of seqs) this.pending.set(seq, { count: (this.pending.get(seq)?.count ?? 0) + 1, at: now });
    if (this.pending.size >= MAX_PENDING_USES) {
      this.flush();
      return;
    }
    this.later.schedule();
  }

  /** Writes the uses waiting (on close, and before anything ordered by use in SQL). */
  flush(): void {
    this.later.cancel();
    if (this.pending.size === 0) return;
    const uses = [...this.pending];
    this.write(uses);
    // Only once written: a failed write keeps them for the next try.
    for (const [seq, use] of uses) if (this.pending.get(seq) === use) this.pending.delete(seq);
  }

  /** When the entry was last used, if that use is not written yet. */
  lastUseAt(seq: number): number | undefined {
    return this.pending.get(seq)?.at;
  }

  /** The entry as read from its row, with the uses not yet written added in. */
  addedTo(seq: number, entry: MemoryEntry): MemoryEntry {
    const pending = this.pending.get(seq);
    return pending ? { ...entry, useCount: entry.useCount + pending.count, lastUsedAt: Math.max(entry.lastUsedAt ?? 0, pending.at) } : entry;
  }
}
