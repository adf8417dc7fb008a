/**
 * LISTEN/NOTIFY for several hob processes on one database (an approval pressed in one
 * process reaches the run waiting in another). Notifications arrive on an ordinary async
 * connection in the main thread, apart from the bridge's synchronous one; they are sent with
 * `SELECT pg_notify(channel, payload)` through the bridge, so a notify inside a transaction
 * goes out only when it commits.
 *
 * A notification sent while the connection is down is lost: PostgreSQL does not keep them.
 * `onReconnect` is the caller's cue to read again what it waits for from the tables.
 */
import type pg from 'pg';
import { newPgClient } from './pg-client.js';
import { describeFailure, parseStoreUrl, type PostgresTarget } from './errors.js';

export type ListenerOptions = {
  url: string;
  /** Told of a lost connection or a failed reconnect, in words without the password. */
  onError: (error: Error) => void;
  /** Called after the connection came back and every channel listens again. */
  onReconnect?: () => void;
  /** First wait before reconnecting; doubles up to 30 s. */
  reconnectMs?: number;
};

const MAX_RECONNECT_MS = 30_000;

export class PostgresListener {
  private readonly target: PostgresTarget;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private closed = false;

  constructor(private readonly options: ListenerOptions) {
    this.target = parseStoreUrl(options.url);
    this.retryMs = options.reconnectMs ?? 1000;
  }

  /** Calls `onPayload` for each notification on `channel`; the returned function stops it. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const client = await this.connection();
    let handlers = this.handlers.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.handlers.set(channel, handlers);
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    }
    handlers.add(onPayload);
    return async () => {
      handlers.delete(onPayload);
      if (handlers.size > 0 || this.handlers.get(channel) !== handlers) return;
      this.handlers.delete(channel);
      await this.client?.query(`UNLISTEN ${this.client.escapeIdentifier(channel)}`);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    const client = await newPgClient({ connectionString: this.options.url, application_name: 'hob-listen', keepAlive: true });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the server closed the connection')));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw describeFailure(failureOf(error), this.target, { statementTimeoutMs: 0 });
    }
    this.client = client;
    return client;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.options.onError(describeFailure(failureOf(error), this.target, { statementTimeoutMs: 0 }));
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connection().then(
        () => {
          this.retryMs = this.options.reconnectMs ?? 1000;
          this.options.onReconnect?.();
        },
        (error: unknown) => {
          this.options.onError(error instanceof Error ? error : new Error(String(error)));
          this.retryMs = Math.min(this.retryMs * 2, MAX_RECONNECT_MS);
          this.scheduleReconnect();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }
}

function failureOf(error: unknown): { message: string; code?: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  return { message, ...(typeof code === 'string' ? { code } : {}) };
}
