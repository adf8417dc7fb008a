/**
 * Who runs which conversation when several `hob start` processes share one database (issue
 * 23). One process (SQLite, the default) runs them all: LocalCluster, which costs nothing —
 * no timers, no queries, nothing on a message's path. On PostgreSQL each process is a node
 * (node-cluster.ts) holding leases on the conversations it runs.
 */
import { newRunnerId, runnerIsGone } from '../../core/runner-id.js';
import type { ConversationRepository } from '../../store/conversations.js';

/** What the gateway lets the cluster do with its conversations. */
export type ClusterHooks = {
  /**
   * Takes up what a stop or a crash left — sends cut off, live messages, pending approvals,
   * runs cut off, messages still queued — for every conversation (one process: a restart) or
   * only for `keys`, the conversations this process just took over.
   */
  recover(keys?: ReadonlySet<string>): Promise<void>;
  /** Another process stored messages for a conversation this one runs: queue the ones not queued here yet. */
  pull(key: string): void;
  /** The platforms this process serves: it takes over only their conversations. */
  platforms: readonly string[];
};

export interface Cluster {
  /** This process's id (host:pid:random): the runner of its job runs and tasks. */
  readonly nodeId: string;
  /**
   * Whether other processes may run conversations: then a command that acts on a conversation
   * is stored in the inbox and handed to its owner like a message (`admit`), not run where it arrived.
   */
  readonly several: boolean;
  /**
   * A message for `key` was just stored in the inbox as row `inboxId` (called inside that
   * transaction): true when this process runs the conversation and queues it now; false when
   * it was handed on (another process runs it and is woken, or this process just took the
   * conversation over and recovers it, this message included, once the transaction commits).
   */
  admit(key: string, inboxId: number): boolean;
  /** The transaction that called `admit` failed: what it took is not held after all. */
  forget(key: string): void;
  /**
   * The inbox rows of `rows` not yet queued in this process, now counted as queued (a
   * message another process stored, or what a takeover finds).
   */
  unseen<Row extends { id: number }>(key: string, rows: Row[]): Row[];
  /** The engine's conversations: a write for a conversation this process no longer holds is refused. */
  fence(conversations: ConversationRepository): ConversationRepository;
  /** Joins (recovering what it takes up), then keeps its leases alive until `stop`. */
  start(hooks: ClusterHooks): Promise<void>;
  /** Hands this process's conversations over (their runs were stopped first): another process takes them at once. */
  stop(): Promise<void>;
  /** Whether the runner of a job run or a task is gone, so its claim may be taken over. */
  isGone(runner: string): boolean;
}

/** One process runs every conversation: a start recovers everything a restart left. */
export class LocalCluster implements Cluster {
  readonly nodeId = newRunnerId();
  readonly several = false;

  admit(): boolean {
    return true;
  }

  forget(): void {}

  unseen<Row extends { id: number }>(_key: string, rows: Row[]): Row[] {
    return rows;
  }

  fence(conversations: ConversationRepository): ConversationRepository {
    return conversations;
  }

  start(hooks: ClusterHooks): Promise<void> {
    return hooks.recover();
  }

  async stop(): Promise<void> {}

  isGone(runner: string): boolean {
    return runnerIsGone(runner);
  }
}
