import type Database from 'better-sqlite3';
import type { Db } from './db.js';

/** What the turn's commit carries besides its members' writes (the outbox's waiting sent marks), and hears once it committed. */
export type CommitCarrier = { writeWithCommit(): number; settled(count: number): void };

/**
 * The store's transactions, with one commit per turn of the event loop for the writes that
 * can wait for it (`inTurn`: an answer and its outbox rows, whose sends wait for `committed`).
 *
 * A commit writes every page it changed to the WAL, two writes per page, and most pages an
 * answer changes are the ones the next answer changes too (the tail of messages, usage and
 * outbox, their indexes, sqlite_sequence): twenty people answered in one turn made twenty
 * commits of ~11 pages each. In one commit they share those pages. The first `inTurn` of a
 * turn opens the transaction (IMMEDIATE); each write runs at once in a savepoint of its own,
 * so one that fails is undone alone and its caller hears it as before; the commit comes once
 * the turn's I/O callbacks ran (setImmediate). Anything else written meanwhile joins it: a
 * `run` (every other transaction) commits the open one with its own work, at once, so what
 * returns from `run` is committed as always; a write outside any transaction is committed at
 * the end of the turn instead of at once. When the commit fails, the transaction is rolled
 * back and every `committed` of the turn rejects with the error.
 */
export class TurnCommit {
  private readonly wrapper: Database.Transaction<(fn: () => unknown) => unknown>;
  /** Transactions running now (nested ones are savepoints of the outermost). */
  private depth = 0;
  private open: { committed: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined;

  constructor(
    private readonly db: Db,
    private readonly carrier: CommitCarrier,
  ) {
    // One wrapper for every transaction (better-sqlite3 builds a new one for each function it
    // is given): it runs the function it is handed, nested ones as savepoints.
    this.wrapper = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * Runs `fn` in one write transaction, committed when it returns (with the turn's writes
   * waiting, if any), rolled back when it throws. Nested calls are savepoints.
   */
  run<T>(fn: () => T): T {
    if (this.insideAnother) return this.nested(fn);
    if (this.open) {
      const value = this.nested(fn);
      const failure = this.settle();
      if (failure) throw failure.error;
      return value;
    }
    let carried = 0;
    const value = this.nested(() => {
      const result = fn();
      carried = this.carrier.writeWithCommit();
      return result;
    });
    this.carrier.settled(carried);
    return value;
  }

  /**
   * Runs `fn` now, in the turn's transaction (opened if none is), as a savepoint: its error is
   * thrown here and undoes its writes alone. `committed` settles when the turn's commit is
   * written (resolved) or failed (rejected). Inside another transaction it is part of that one.
   */
  inTurn<T>(fn: () => T): { value: T; committed: Promise<void> } {
    if (this.insideAnother) return { value: this.nested(fn), committed: Promise.resolve() };
    const open = this.open ?? this.begin();
    return { value: this.nested(fn), committed: open.committed };
  }

  /** Commits the turn's transaction now, if one is open (closing the store). A failure reaches the turn's writers through `committed`. */
  commit(): void {
    this.settle();
  }

  /** Commits the open transaction; when that fails, rolls it back and rejects its `committed` (returning the error). */
  private settle(): { error: unknown } | undefined {
    const open = this.open;
    if (!open) return undefined;
    this.open = undefined;
    let carried = 0;
    try {
      carried = this.carrier.writeWithCommit();
      this.db.prepare('COMMIT').run();
    } catch (error) {
      try {
        if (this.db.inTransaction) this.db.prepare('ROLLBACK').run();
      } catch {
        // The file is in worse trouble than the commit said; the commit's error is the one to tell.
      }
      open.reject(error);
      return { error };
    }
    this.carrier.settled(carried);
    open.resolve();
    return undefined;
  }

  private begin(): NonNullable<TurnCommit['open']> {
    this.db.prepare('BEGIN IMMEDIATE').run();
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const committed = new Promise<void>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    // Each member's caller awaits it; one that stopped waiting leaves no unhandled rejection.
    committed.catch(() => undefined);
    this.open = { committed, resolve, reject };
    // Kept referenced: a caller waits on it, so the process must live until it ran.
    setImmediate(() => this.commit());
    return this.open;
  }

  /** Inside another transaction (ours, or one a repository opened itself): a call is a savepoint of it. */
  private get insideAnother(): boolean {
    return this.depth > 0 || (this.db.inTransaction && !this.open);
  }

  private nested<T>(fn: () => T): T {
    this.depth++;
    try {
      return this.wrapper.immediate(fn) as T;
    } finally {
      this.depth--;
    }
  }
}
