/**
 * Session-level advisory locks on a connection of their own: held for as long as this process
 * keeps the connection, let go by PostgreSQL the moment the process ends or dies (no lease to
 * expire, no row to clean up). hob uses them for what only one process may do at a time
 * across a workspace (a channel only one process may receive, ChannelModule.singleConsumer).
 *
 * A lock lives on the connection: when the connection is lost, so is every lock on it, and
 * `onLost` says so (another process may take it from then on).
 */
import type pg from 'pg';
import { newPgClient } from './pg-client.js';
import { describeFailure, parseStoreUrl, type PostgresTarget } from './errors.js';

export type AdvisoryLockOptions = {
  url: string;
  /** Told, in words without the password, when the connection and with it every lock held is lost. */
  onLost: (error: Error) => void;
};

/** The first key of hob's two-key advisory locks, so they never meet another program's (or hob's own one-key locks). */
const HOB_LOCK_SPACE = 0x686f62; // "hob"

export class PostgresAdvisoryLocks {
  private readonly target: PostgresTarget;
  private client: pg.Client | undefined;
  private closed = false;

  constructor(private readonly options: AdvisoryLockOptions) {
    this.target = parseStoreUrl(options.url);
  }

  /** Takes the lock named `key` when no other session holds it: true when this process now holds it. */
  async tryHold(key: string): Promise<boolean> {
    const client = await this.connection();
    const result = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1::int4, hashtext($2)) AS held', [HOB_LOCK_SPACE, key]);
    return result.rows[0]?.held === true;
  }

  /** Lets every lock go (closing the connection does it). */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = await newPgClient({ connectionString: this.options.url, application_name: 'hob-locks', keepAlive: true });
    const lost = (error: Error): void => {
      if (this.client !== client || this.closed) return;
      this.client = undefined;
      this.options.onLost(describeFailure({ message: error.message }, this.target, { statementTimeoutMs: 0 }));
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the server closed the connection')));
    try {
      await client.connect();
    } catch (error) {
      client.end().catch(() => undefined);
      throw describeFailure({ message: error instanceof Error ? error.message : String(error), ...codeOf(error) }, this.target, { statementTimeoutMs: 0 });
    }
    this.client = client;
    return client;
  }
}

function codeOf(error: unknown): { code?: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { code } : {};
}
