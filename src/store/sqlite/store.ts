/**
 * The SQLite store: one file in data_dir (WAL), the Store port's default. One process writes
 * at a time; readers never block the writer.
 */
import { errorMessage } from '../../core/errors.js';
import type { Store, StoreOptions } from '../store.js';
import type { VectorSupport } from '../vectors.js';
import { SqliteApprovals } from './approvals.js';
import { SqliteConversations } from './conversations.js';
import { openDatabase, type Db } from './db.js';
import { MessageIndex } from './message-index.js';
import { SqliteInbox } from './inbox.js';
import { SqliteJobs } from './jobs.js';
import { SqliteMemoryEntries } from './memory/entries.js';
import { SqliteOutbox } from './outbox.js';
import { SqlitePairings } from './pairings.js';
import { SqlitePeople } from './people.js';
import { SqlitePermissionRules } from './permission-rules.js';
import { SqliteProfiles } from './profiles.js';
import { SqliteSessionArchive } from './session-archive.js';
import { SqliteTasks } from './tasks.js';
import { SqliteTokenCalibration } from './token-calibration.js';
import { IdleCheckpoint } from './idle-checkpoint.js';
import { TurnCommit } from './turn-commit.js';
import { SqliteVectors } from './vectors.js';

/** What only the SQLite store takes: the commits between idle checkpoints (idle-checkpoint.ts; `Infinity` leaves them to SQLite alone, as the benchmark compares). */
export type SqliteStoreOptions = StoreOptions & { idleCheckpointCommits?: number };

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly conversations: SqliteConversations;
  readonly archive: SqliteSessionArchive;
  readonly inbox: SqliteInbox;
  readonly outbox: SqliteOutbox;
  readonly approvals: SqliteApprovals;
  readonly pairings: SqlitePairings;
  readonly permissionRules: SqlitePermissionRules;
  readonly jobs: SqliteJobs;
  readonly tasks: SqliteTasks;
  readonly people: SqlitePeople;
  readonly memory: SqliteMemoryEntries;
  readonly profiles: SqliteProfiles;
  readonly tokenCalibration: SqliteTokenCalibration;
  /** Session search's index: messages' rows reach it in batches (message-index.ts). */
  private readonly messageIndex: MessageIndex;
  /** Every transaction, and the turn's commit for the writes that wait for it (turn-commit.ts). */
  private readonly commits: TurnCommit;
  /** The WAL copied back into the file at idle moments, not inside an answer's commit (idle-checkpoint.ts). */
  private readonly checkpoints: IdleCheckpoint;
  private vectorIndex: { index: SqliteVectors } | { error: string } | undefined;

  /** `db`: the open file; SQLite-only callers (tests, `hob store migrate`) may read it directly. */
  constructor(
    readonly db: Db,
    readonly location: string,
    options: SqliteStoreOptions,
  ) {
    const { clock } = options;
    this.messageIndex = new MessageIndex(db, (error) => options.onBackgroundError?.(new Error(`moving messages' search rows into the index: ${errorMessage(error)}`)));
    this.conversations = new SqliteConversations(db, clock, this.messageIndex);
    this.archive = new SqliteSessionArchive(db, this.messageIndex);
    this.inbox = new SqliteInbox(db);
    this.outbox = new SqliteOutbox(db, (error) => options.onBackgroundError?.(new Error(`writing deliveries' sent marks: ${errorMessage(error)}`)));
    this.checkpoints = new IdleCheckpoint(db, { afterCommits: options.idleCheckpointCommits, onError: (error) => options.onBackgroundError?.(new Error(`copying the WAL back into the file: ${errorMessage(error)}`)) });
    // The outbox's sent marks ride on each commit; the idle checkpoint counts them.
    this.commits = new TurnCommit(db, {
      writeWithCommit: () => this.outbox.writeWithCommit(),
      settled: (count) => {
        this.outbox.settled(count);
        this.checkpoints.committed();
      },
    });
    this.approvals = new SqliteApprovals(db);
    this.pairings = new SqlitePairings(db);
    this.permissionRules = new SqlitePermissionRules(db, clock);
    this.jobs = new SqliteJobs(db);
    this.tasks = new SqliteTasks(db);
    this.memory = new SqliteMemoryEntries(db, clock, options.onBackgroundError);
    this.people = new SqlitePeople(db, (from, to) => {
      this.memory.reassign(from, to);
      this.messageIndex.reassign(from, to);
    });
    this.profiles = new SqliteProfiles(db);
    this.tokenCalibration = new SqliteTokenCalibration(db, clock);
  }

  /**
   * IMMEDIATE: it takes the write lock at once, so a read inside it never works on a snapshot
   * another process has since overtaken. The outermost one also carries the outbox's waiting
   * "sent" marks (outbox.ts): in a burst the answers' commits and the marks share pages and
   * commits, where the marks would otherwise take a commit of their own at the end of the turn.
   * With the turn's writes waiting (`transactionInTurn`), it commits them with its own.
   */
  transaction<T>(fn: () => T): T {
    return this.commits.run(fn);
  }

  transactionInTurn<T>(fn: () => T): { value: T; committed: Promise<void> } {
    return this.commits.inTurn(fn);
  }

  close(): void {
    if (!this.db.open) return;
    this.checkpoints.close();
    this.commits.commit();
    this.memory.flushUses();
    this.messageIndex.flush();
    this.outbox.flush();
    this.db.close();
  }

  vectorSupport(): VectorSupport {
    this.vectorIndex ??= SqliteVectors.open(this.db);
    return 'index' in this.vectorIndex
      ? { mode: 'sqlite-vec', description: 'sqlite-vec in the same file: sign bits for candidates, ranked by exact cosine' }
      : { mode: 'none', problem: this.vectorIndex.error };
  }

  vectors(): SqliteVectors | undefined {
    this.vectorSupport();
    return this.vectorIndex && 'index' in this.vectorIndex ? this.vectorIndex.index : undefined;
  }

  hasVectors(): boolean {
    return SqliteVectors.present(this.db);
  }
}

/** Opens (creating if needed) the SQLite store at `path` and brings its schema up to date. */
export function openSqliteStore(path: string, options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(openDatabase(path), path, options);
}
