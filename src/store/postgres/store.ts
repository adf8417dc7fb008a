/**
 * The PostgreSQL store: several hob processes on one database. Each statement runs on the
 * bridge's worker connection while the caller waits (bridge.ts), so the repositories read
 * as the SQLite ones do; the schema is brought up to date at open (migrate.ts).
 */
import type { Store, StoreOptions } from '../store.js';
import type { VectorSupport } from '../vectors.js';
import { PostgresBridge } from './bridge.js';
import { describeTarget } from './errors.js';
import { migratePostgres } from './migrate.js';
import { vectorSupport } from './memory-search.js';
import { PostgresApprovals, PostgresPairings } from './repositories/approvals.js';
import { PostgresCluster } from './repositories/cluster.js';
import { PostgresConversations } from './repositories/conversations.js';
import { PostgresInbox } from './repositories/inbox.js';
import { PostgresJobs } from './repositories/jobs.js';
import { PostgresMemoryEntries, PostgresVectors } from './repositories/memory.js';
import { PostgresOutbox } from './repositories/outbox.js';
import { PostgresPeople } from './repositories/people.js';
import { PostgresSessionArchive } from './repositories/session-archive.js';
import { PostgresTasks } from './repositories/tasks.js';
import { PostgresPermissionRules, PostgresProfiles, PostgresTokenCalibration } from './repositories/settings.js';
import { Sql } from './sql.js';

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly location: string;
  readonly conversations: PostgresConversations;
  readonly archive: PostgresSessionArchive;
  readonly inbox: PostgresInbox;
  readonly outbox: PostgresOutbox;
  readonly approvals: PostgresApprovals;
  readonly pairings: PostgresPairings;
  readonly permissionRules: PostgresPermissionRules;
  readonly jobs: PostgresJobs;
  readonly tasks: PostgresTasks;
  readonly people: PostgresPeople;
  readonly memory: PostgresMemoryEntries;
  readonly profiles: PostgresProfiles;
  readonly tokenCalibration: PostgresTokenCalibration;
  readonly cluster: PostgresCluster;
  private readonly vectorRepository: PostgresVectors;
  private support: VectorSupport | undefined;

  constructor(
    readonly bridge: PostgresBridge,
    options: StoreOptions,
  ) {
    const sql = new Sql(bridge);
    const { clock } = options;
    this.location = describeTarget(bridge.target);
    this.conversations = new PostgresConversations(sql, clock);
    this.archive = new PostgresSessionArchive(sql);
    this.inbox = new PostgresInbox(sql);
    // The node this process joins as claims the sends it makes (set by cluster.join).
    const claimant = { nodeId: undefined };
    this.outbox = new PostgresOutbox(sql, claimant);
    this.cluster = new PostgresCluster(sql, claimant);
    this.approvals = new PostgresApprovals(sql);
    this.pairings = new PostgresPairings(sql);
    this.permissionRules = new PostgresPermissionRules(sql, clock);
    this.jobs = new PostgresJobs(sql);
    this.tasks = new PostgresTasks(sql);
    this.memory = new PostgresMemoryEntries(sql, clock, options.onBackgroundError);
    this.people = new PostgresPeople(sql, (from, to) => this.memory.reassign(from, to));
    this.profiles = new PostgresProfiles(sql);
    this.tokenCalibration = new PostgresTokenCalibration(sql, clock);
    this.vectorRepository = new PostgresVectors(sql);
  }

  transaction<T>(fn: () => T): T {
    return this.bridge.transaction(fn);
  }

  /** Committed at once: each transaction is a round trip to the server either way, and other processes read what it wrote. */
  transactionInTurn<T>(fn: () => T): { value: T; committed: Promise<void> } {
    return { value: this.bridge.transaction(fn), committed: Promise.resolve() };
  }

  close(): void {
    try {
      this.memory.flushUses();
    } finally {
      this.bridge.close();
    }
  }

  vectorSupport(): VectorSupport {
    this.support ??=
      vectorSupport(this.bridge) === 'pgvector'
        ? { mode: 'pgvector', description: 'real[] in PostgreSQL; the pgvector extension is installed in this database' }
        : { mode: 'arrays', description: 'real[] in PostgreSQL, ranked by hob per person (no pgvector extension in this database)' };
    return this.support;
  }

  vectors(): PostgresVectors {
    return this.vectorRepository;
  }

  hasVectors(): boolean {
    return this.bridge.query('SELECT 1 FROM memory_vectors LIMIT 1').rowCount > 0;
  }
}

/** Connects, brings the schema up to date (once, also when several processes start together), and opens the store. */
export function openPostgresStore(url: string, options: StoreOptions): PostgresStore {
  const bridge = new PostgresBridge({ url });
  try {
    migratePostgres(bridge);
  } catch (error) {
    bridge.close();
    throw error;
  }
  return new PostgresStore(bridge, options);
}
