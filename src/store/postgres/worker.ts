/**
 * The PostgreSQL store's worker thread: it holds one connection (pg's Client) and runs the
 * statements the main thread's bridge sends, one at a time, while the main thread waits. One
 * connection is all it needs: the main thread sends the next statement only after the reply
 * to the last, so a transaction's statements all run on it.
 */
import { workerData } from 'node:worker_threads';
import pg from 'pg';
import type { BridgeFailure, BridgeReply, BridgeRequest, WorkerSettings } from './bridge-protocol.js';

const settings = workerData as WorkerSettings;
const state = new Int32Array(settings.state);

// bigint columns (ids, epoch milliseconds) as numbers: hob's never pass 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

let client: pg.Client | undefined;
/** Open transaction levels: 1 is BEGIN, more are savepoints. */
let depth = 0;
/** The connection died inside a transaction: refuse statements until the caller rolls back. */
let lostTransaction = false;
let current: number | undefined;
/** The statement run on a timer (`repeat`), if any. */
let repeating: NodeJS.Timeout | undefined;

async function connection(): Promise<pg.Client> {
  if (client) return client;
  const fresh = new pg.Client({
    connectionString: settings.url,
    statement_timeout: settings.statementTimeoutMs,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    application_name: 'hob',
  });
  fresh.on('error', () => dropConnection(fresh));
  try {
    await fresh.connect();
    // Index reads cost about what sequential ones do on today's disks (the default, 4, is
    // for spinning ones): with it the planner would scan all of a person's memory instead
    // of reading the full-text index.
    await fresh.query('SET random_page_cost = 1.1');
  } catch (error) {
    fresh.end().catch(() => undefined);
    throw error;
  }
  client = fresh;
  return fresh;
}

function dropConnection(which: pg.Client | undefined): void {
  if (!which || which !== client) return;
  client = undefined;
  which.end().catch(() => undefined);
  if (depth > 0) lostTransaction = true;
}

async function handle(request: BridgeRequest): Promise<BridgeReply> {
  const { id } = request;
  switch (request.kind) {
    case 'query': {
      const result = await (await usable()).query({ text: request.sql, values: [...request.params] });
      return { id, ok: true, rows: result.rows as Record<string, unknown>[], rowCount: result.rowCount ?? 0 };
    }
    case 'exec':
      await (await usable()).query(request.sql);
      return { id, ok: true, rows: [], rowCount: 0 };
    case 'begin': {
      const db = await usable();
      await db.query(depth === 0 ? 'BEGIN' : `SAVEPOINT hob_${depth}`);
      depth += 1;
      return { id, ok: true, rows: [], rowCount: 0 };
    }
    case 'commit': {
      const db = await usable();
      depth -= 1;
      await db.query(depth === 0 ? 'COMMIT' : `RELEASE SAVEPOINT hob_${depth}`);
      return { id, ok: true, rows: [], rowCount: 0 };
    }
    case 'rollback':
      depth = Math.max(0, depth - 1);
      if (lostTransaction) {
        // The server rolled it back when the connection went.
        if (depth === 0) lostTransaction = false;
      } else if (client) {
        await client.query(depth === 0 ? 'ROLLBACK' : `ROLLBACK TO SAVEPOINT hob_${depth}; RELEASE SAVEPOINT hob_${depth}`);
      }
      return { id, ok: true, rows: [], rowCount: 0 };
    case 'repeat': {
      const { sql, params } = request;
      if (repeating) clearInterval(repeating);
      repeating = setInterval(() => {
        usable()
          .then((db) => db.query({ text: sql, values: [...params] }))
          .catch((error: unknown) => {
            if (!(error instanceof pg.DatabaseError)) dropConnection(client);
          });
      }, request.everyMs);
      return { id, ok: true, rows: [], rowCount: 0 };
    }
    case 'close': {
      if (repeating) clearInterval(repeating);
      const closing = client;
      client = undefined;
      await closing?.end();
      return { id, ok: true, rows: [], rowCount: 0 };
    }
    default:
      return request satisfies never;
  }
}

async function usable(): Promise<pg.Client> {
  if (lostTransaction) {
    throw Object.assign(new Error('the connection to PostgreSQL was lost inside a transaction, which was rolled back; roll back and try again'), { code: 'TRANSACTION_LOST' });
  }
  return connection();
}

function failureOf(error: unknown): BridgeFailure {
  if (error instanceof pg.DatabaseError) return { message: error.message, ...(error.code ? { code: error.code } : {}), ...(error.detail ? { detail: error.detail } : {}) };
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  // pg words a connect timeout without a code.
  if (/connection timeout|timeout expired/i.test(message)) return { message, code: 'CONNECT_TIMEOUT' };
  return { message, ...(typeof code === 'string' ? { code } : {}) };
}

function reply(message: BridgeReply): void {
  settings.port.postMessage(message);
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
}

settings.port.on('message', (request: BridgeRequest) => {
  current = request.id;
  handle(request).then(reply, (error: unknown) => {
    // A network failure leaves the connection unusable; the next statement opens a new one.
    if (!(error instanceof pg.DatabaseError)) dropConnection(client);
    reply({ id: request.id, ok: false, failure: failureOf(error), ...('sql' in request ? { sql: request.sql } : {}) });
  });
});

// Whatever goes wrong, the main thread hears it now rather than at its wait limit.
process.on('uncaughtException', (error) => {
  if (current !== undefined) reply({ id: current, ok: false, failure: failureOf(error) });
});
