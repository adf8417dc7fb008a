/**
 * Synchronous calls into PostgreSQL. The Store port is synchronous (as better-sqlite3 is), so
 * the PostgreSQL store runs each statement on a worker thread's connection while the caller
 * waits: the request is posted to the worker, the main thread sleeps in `Atomics.wait` until
 * the worker flags its reply, and reads the reply with `receiveMessageOnPort` (the pattern of
 * the synckit package, written out here: see bridge-worker-location below for why).
 *
 * Every call has a time limit: the server cancels a statement past `statementTimeoutMs`
 * (statement_timeout), and the caller stops waiting after that plus the connect time; a
 * worker that does not answer by then is replaced, so a dead network is an error, never a hang.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { BridgeReply, BridgeRequest, SqlValue, WorkerSettings } from './bridge-protocol.js';
import { describeFailure, describeTarget, parseStoreUrl, PostgresStoreError, type PostgresTarget } from './errors.js';

export type { SqlValue } from './bridge-protocol.js';

export type BridgeSettings = {
  /** `store.url`: postgres://USER:PASSWORD@HOST:PORT/DATABASE. */
  url: string;
  /** The server cancels a statement that runs longer (statement_timeout). Default 10 s. */
  statementTimeoutMs?: number;
  /** Opening a connection gives up after this long. Default 5 s. */
  connectTimeoutMs?: number;
};

export type QueryResult<Row> = { rows: Row[]; rowCount: number };

/** Beyond the statement and connect time: the worker's own hop and the reply's way back. */
const WAIT_MARGIN_MS = 2000;

type Channel = { worker: Worker; port: MessagePort; state: Int32Array };

/**
 * One connection to PostgreSQL, used synchronously. Statements take `$1, $2…` parameters;
 * bigint columns come back as numbers, bytea as Uint8Array. Calls never overlap (each waits),
 * so a `transaction` holds the one connection for its whole body.
 */
export class PostgresBridge {
  readonly target: PostgresTarget;
  private readonly statementTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private channel: Channel | undefined;
  private nextId = 0;
  /** Transaction levels open, as the caller sees them. */
  private depth = 0;
  /** Levels that were open when a worker was replaced: their statements are gone. */
  private lostDepth = 0;
  private closed = false;

  constructor(private readonly settings: BridgeSettings) {
    this.target = parseStoreUrl(settings.url);
    this.statementTimeoutMs = settings.statementTimeoutMs ?? 10_000;
    this.connectTimeoutMs = settings.connectTimeoutMs ?? 5000;
  }

  /** Another bridge to the same database, with a worker and a connection of its own. */
  sibling(): PostgresBridge {
    return new PostgresBridge(this.settings);
  }

  /** Runs one statement. */
  query<Row = Record<string, unknown>>(sql: string, params: readonly SqlValue[] = []): QueryResult<Row> {
    const reply = this.call({ kind: 'query', sql, params });
    return { rows: reply.rows as Row[], rowCount: reply.rowCount };
  }

  /** Runs several statements given as one text, without parameters (schema changes). */
  exec(sql: string): void {
    this.call({ kind: 'exec', sql });
  }

  /**
   * Runs `fn` in a transaction on the bridge's connection: committed when it returns, rolled
   * back when it throws (the error is rethrown). Nested calls are savepoints. `fn` must be
   * synchronous: a promise would commit before its work.
   */
  transaction<T>(fn: () => T): T {
    this.call({ kind: 'begin' });
    this.depth += 1;
    let result: T;
    try {
      result = fn();
      if (result instanceof Promise) throw new PostgresStoreError('transaction(fn) got a promise: fn must be synchronous, or its statements would run after the commit.');
    } catch (error) {
      this.rollback();
      throw error;
    }
    this.depth -= 1;
    if (this.lostDepth > this.depth) {
      this.lostDepth = this.depth;
      throw this.lostTransaction();
    }
    this.call({ kind: 'commit' });
    return result;
  }

  /**
   * Runs `sql` every `everyMs` on the worker's own timer until `close`, whatever the main
   * thread is doing (a node's heartbeat). Use a bridge of its own for it: its statements
   * would otherwise fall between a transaction's.
   */
  repeat(sql: string, params: readonly SqlValue[], everyMs: number): void {
    this.call({ kind: 'repeat', sql, params, everyMs });
  }

  /** Ends the connection and the worker. Calls after this fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const channel = this.channel;
    this.channel = undefined;
    if (!channel) return;
    try {
      this.roundTrip(channel, { id: this.nextId++, kind: 'close' }, this.connectTimeoutMs);
    } catch {
      // Closing: the worker goes either way.
    }
    void channel.worker.terminate();
  }

  private rollback(): void {
    this.depth -= 1;
    if (this.lostDepth > this.depth) {
      this.lostDepth = this.depth;
      return;
    }
    try {
      this.call({ kind: 'rollback' });
    } catch {
      // The caller's error says more than the rollback's; a broken connection rolls back on its own.
    }
  }

  private call(request: DistributiveOmit<BridgeRequest, 'id'>): Extract<BridgeReply, { ok: true }> {
    if (this.closed) throw new PostgresStoreError(`The PostgreSQL store (${describeTarget(this.target)}) is closed.`);
    if (this.lostDepth > 0 && request.kind !== 'rollback') throw this.lostTransaction();
    const channel = (this.channel ??= this.startWorker());
    const waitMs = this.statementTimeoutMs + this.connectTimeoutMs + WAIT_MARGIN_MS;
    const reply = this.roundTrip(channel, { ...request, id: this.nextId++ } as BridgeRequest, waitMs);
    if (!reply.ok) throw describeFailure(reply.failure, this.target, { statementTimeoutMs: this.statementTimeoutMs, sql: reply.sql });
    return reply;
  }

  private roundTrip(channel: Channel, request: BridgeRequest, waitMs: number): BridgeReply {
    Atomics.store(channel.state, 0, 0);
    channel.port.postMessage(request);
    const deadline = performance.now() + waitMs;
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0 || Atomics.wait(channel.state, 0, 0, remaining) === 'timed-out') {
        this.replaceWorker(channel);
        throw new PostgresStoreError(
          `PostgreSQL at ${describeTarget(this.target)} did not answer within ${Math.round(waitMs / 1000)} s; hob dropped the connection and opens a new one on the next call.`,
          'WAIT_TIMEOUT',
        );
      }
      // The worker posts before it flags, so the reply is there; the flag stays set, so a
      // reply not yet readable is simply polled again.
      const received = receiveMessageOnPort(channel.port)?.message as BridgeReply | undefined;
      if (received?.id === request.id) return received;
    }
  }

  /** A worker that did not answer is ended with its connection (the server rolls back what it held). */
  private replaceWorker(channel: Channel): void {
    if (this.channel === channel) this.channel = undefined;
    this.lostDepth = this.depth;
    void channel.worker.terminate();
  }

  private lostTransaction(): PostgresStoreError {
    return new PostgresStoreError(`The transaction was cut off: PostgreSQL at ${describeTarget(this.target)} stopped answering, and nothing of it was kept.`, 'TRANSACTION_LOST');
  }

  private startWorker(): Channel {
    const { port1, port2 } = new MessageChannel();
    const state = new SharedArrayBuffer(4);
    const workerData: WorkerSettings = { url: this.settings.url, statementTimeoutMs: this.statementTimeoutMs, connectTimeoutMs: this.connectTimeoutMs, state, port: port2 };
    const worker = startBridgeWorker(workerData, [port2]);
    // An idle store does not keep hob running; close() ends it properly.
    worker.unref();
    return { worker, port: port1, state: new Int32Array(state) };
  }
}

/**
 * Why not synckit itself: it keeps one worker per worker file for the whole process (two
 * stores would share one connection), and it has no way to end a worker that stopped
 * answering, which is what turns a dead network into an error here.
 *
 * Where the worker is: in the bundle (`dist/`), scripts/build.mjs writes it as
 * `postgres-worker.js` beside the chunk this code lands in; from source (tests, benchmarks)
 * worker-from-source.mjs loads worker.ts through tsx.
 */
function startBridgeWorker(workerData: WorkerSettings, transferList: MessagePort[]): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  return new Worker(new URL(fromSource ? './worker-from-source.mjs' : './postgres-worker.js', import.meta.url), { workerData, transferList });
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
