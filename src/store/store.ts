/**
 * The Store port: everything hob keeps, behind one synchronous interface. Two stores
 * implement it: SQLite (one file in data_dir, the default; sqlite/) and PostgreSQL (several
 * hob processes on one database; postgres/). The contract suite in test/store/contract/
 * runs against both; whatever a caller may rely on is written here, not in either store.
 *
 * Calls are synchronous (as better-sqlite3 is): the PostgreSQL store waits for its worker
 * thread. Timestamps are epoch milliseconds; ids of rows are numbers.
 */
import type { ApprovalRepository } from './approvals.js';
import type { ClusterRepository } from './cluster.js';
import type { ConversationRepository } from './conversations.js';
import type { InboxRepository } from './inbox.js';
import type { JobRepository } from './jobs.js';
import type { MemoryEntryRepository } from './memory/entries.js';
import type { OutboxRepository } from './outbox.js';
import type { PairingRepository } from './pairings.js';
import type { PeopleRepository } from './people.js';
import type { PermissionRuleRepository } from './permission-rules.js';
import type { ProfileRepository } from './profiles.js';
import type { SessionArchive } from './session-archive.js';
import type { TaskRepository } from './tasks.js';
import type { TokenCalibrationRepository } from './token-calibration.js';
import type { VectorRepository, VectorSupport } from './vectors.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface Store {
  readonly kind: StoreKind;
  /** Where the data is, in words safe to log (a path, or host:port/database without the password). */
  readonly location: string;
  /**
   * Runs `fn` in one write transaction: committed when it returns, rolled back when it
   * throws (the error is rethrown). Repository calls inside it join it; nested calls are
   * savepoints. `fn` must be synchronous.
   */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `fn` now, as `transaction` does (its error is thrown here and undoes its writes), for
   * writes whose commit may wait for the end of this turn of the event loop, to share it with
   * the turn's other such writes (SQLite: one commit for the answers of a burst). Whoever acts
   * on them outside the store (sends the answer they record) waits for `committed` first; it
   * rejects when the commit failed and the writes are gone. A store without the wait commits
   * at once.
   */
  transactionInTurn<T>(fn: () => T): { value: T; committed: Promise<void> };
  /** Writes what waits (memory uses), then closes. Calls after this fail. */
  close(): void;
  /** How this store keeps memory vectors, or why it cannot (loads the vector support on first ask). */
  vectorSupport(): VectorSupport;
  /** The vectors, when the store can keep them (see vectorSupport). */
  vectors(): VectorRepository | undefined;
  /** Whether any vector is stored (then deleting an entry must reach it even with embeddings off). */
  hasVectors(): boolean;

  readonly conversations: ConversationRepository;
  readonly archive: SessionArchive;
  readonly inbox: InboxRepository;
  readonly outbox: OutboxRepository;
  readonly approvals: ApprovalRepository;
  readonly pairings: PairingRepository;
  readonly permissionRules: PermissionRuleRepository;
  readonly jobs: JobRepository;
  /** Background tasks and workers, in the same database as the outbox their results go through. */
  readonly tasks: TaskRepository;
  readonly people: PeopleRepository;
  readonly memory: MemoryEntryRepository;
  readonly profiles: ProfileRepository;
  readonly tokenCalibration: TokenCalibrationRepository;
  /**
   * Nodes and conversation leases for several processes on one database (cluster.ts): the
   * PostgreSQL store has them; the SQLite store is one process and has none.
   */
  readonly cluster?: ClusterRepository;
}

/** What opening a store needs besides where it is. */
export type StoreOptions = {
  clock: { now(): number };
  /** Told when a write made off the caller's path (memory uses, the messages' search rows: on a timer) fails. */
  onBackgroundError?: (error: unknown) => void;
};
