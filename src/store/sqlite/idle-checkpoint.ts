import { whenIdle, type IdleSettings } from '../../core/when-idle.js';
import type { Db } from './db.js';

/**
 * Commits after which the next idle moment copies the WAL back into the file. A message one at
 * a time makes ~3 commits of a few pages each, a burst of 20 new people ~4 of ~200 pages in
 * all: 32 commits are ~10 messages or ~8 bursts, well under the 4,000 pages at which SQLite
 * checkpoints by itself (db.ts's WAL_CHECKPOINT_PAGES), so a chat with pauses never reaches
 * that; and not every message, so a checkpoint copies a page many answers changed once.
 */
export const IDLE_CHECKPOINT_COMMITS = 32;

/**
 * WAL checkpoints at hob's idle moments instead of inside a commit. SQLite's own checkpoint
 * runs in the commit that crosses its threshold, on the thread that commits: it copies every
 * page the WAL changed back into the file and syncs both, and the answer being stored waits
 * (bench/answer-writes.ts: a burst of 20 new people's answers that met it took ~30 ms against
 * ~2 ms on this VM's disk; a slow disk or an SD card makes it far longer). Here, once enough commits went through, a
 * PASSIVE checkpoint waits for the event loop's first idle look (core/when-idle.ts) and runs
 * there; SQLite's own stays as the backstop for a load that never pauses. PASSIVE never waits on
 * another connection: what a reader still uses is left for the next one.
 */
export class IdleCheckpoint {
  private commits = 0;
  private cancel: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: { afterCommits?: number; idle?: IdleSettings; onError?: (error: unknown) => void } = {},
  ) {}

  /** A commit went through; after enough of them, a checkpoint waits for the first idle moment. */
  committed(): void {
    this.commits += 1;
    if (this.cancel || this.commits < (this.options.afterCommits ?? IDLE_CHECKPOINT_COMMITS)) return;
    this.cancel = whenIdle(() => this.checkpoint(), this.options.idle);
  }

  /** Stops waiting (the store closes). */
  close(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  private checkpoint(): void {
    this.cancel = undefined;
    this.commits = 0;
    if (!this.db.open) return;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      // The WAL stays as it is: SQLite's own checkpoint, or the next idle one, copies it back.
      this.options.onError?.(error);
    }
  }
}
