import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { PostgresStoreError } from '../../../src/store/postgres/errors.js';
import { bundleWithWorker, postgresSkipReason } from '../../support/postgres.js';
import { postgresDatabase } from '../../support/postgres-fixture.js';

/**
 * A TCP hop between the bridge and the server that can stop passing bytes on (a network that
 * goes silent) while keeping the connection open, as a cut cable does. It runs on a thread of
 * its own: the bridge blocks this one while it waits. `silence()` flips a shared flag, so it
 * takes effect before the next statement is sent.
 */
async function silentableProxy(target: { host: string; port: number }): Promise<{ port: number; silence(): void; restore(): void; close(): Promise<void> }> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const code = `
    const { createServer, connect } = require('node:net');
    const { parentPort, workerData } = require('node:worker_threads');
    const flag = new Int32Array(workerData.flag);
    const pass = (to) => (chunk) => { if (Atomics.load(flag, 0) === 0) to.write(chunk); };
    const server = createServer((client) => {
      const upstream = connect(workerData.port, workerData.host);
      client.on('data', pass(upstream));
      upstream.on('data', pass(client));
      const end = () => { client.destroy(); upstream.destroy(); };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
  `;
  const worker = new Worker(code, { eval: true, workerData: { flag: flag.buffer, host: target.host, port: target.port } });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  return {
    port,
    silence: () => Atomics.store(flag, 0, 1),
    restore: () => Atomics.store(flag, 0, 0),
    close: async () => {
      await worker.terminate();
    },
  };
}

/** What a first statement on a bridge to `target` fails with. */
function failureOf(target: string): string {
  const bridge = new PostgresBridge({ url: target });
  try {
    bridge.query('SELECT 1');
    return 'no failure';
  } catch (error) {
    return (error as Error).message;
  } finally {
    bridge.close();
  }
}

function withPort(url: string, port: number): string {
  const next = new URL(url);
  next.port = String(port);
  return next.toString();
}

describe.skipIf(postgresSkipReason)(`the PostgreSQL bridge${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  const db = postgresDatabase();

  it('runs statements synchronously with parameters, and gives numbers, arrays and bytes back as they went in', () => {
    db.bridge.exec('CREATE TABLE notes (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body TEXT NOT NULL, at BIGINT NOT NULL, tags TEXT[] NOT NULL, vector REAL[], raw BYTEA)');
    const inserted = db.bridge.query<{ id: number }>('INSERT INTO notes (body, at, tags, vector, raw) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
      'Padel on Thursday',
      1_764_590_000_000,
      ['sport', 'weekly'],
      [0.5, -0.25],
      new Uint8Array([1, 2, 3]),
    ]);
    expect(inserted.rows).toEqual([{ id: 1 }]);
    const { rows, rowCount } = db.bridge.query('SELECT id, body, at, tags, vector, raw FROM notes WHERE id = $1', [1]);
    expect(rowCount).toBe(1);
    expect(rows[0]).toEqual({ id: 1, body: 'Padel on Thursday', at: 1_764_590_000_000, tags: ['sport', 'weekly'], vector: [0.5, -0.25], raw: new Uint8Array([1, 2, 3]) });
    expect(db.bridge.query("UPDATE notes SET body = 'Padel on Friday'").rowCount).toBe(1);
  });

  it('commits a transaction that returns, rolls back one that throws, and keeps the outer one when a nested one fails', () => {
    db.bridge.exec('CREATE TABLE ledger (entry TEXT PRIMARY KEY)');
    const added = db.bridge.transaction(() => {
      db.bridge.query("INSERT INTO ledger VALUES ('kept')");
      return 'done';
    });
    expect(added).toBe('done');
    expect(() =>
      db.bridge.transaction(() => {
        db.bridge.query("INSERT INTO ledger VALUES ('dropped')");
        throw new Error('changed my mind');
      }),
    ).toThrow('changed my mind');
    db.bridge.transaction(() => {
      db.bridge.query("INSERT INTO ledger VALUES ('outer')");
      expect(() => db.bridge.transaction(() => db.bridge.query("INSERT INTO ledger VALUES ('kept')"))).toThrow(/duplicate key/);
    });
    expect(db.bridge.query<{ entry: string }>('SELECT entry FROM ledger ORDER BY entry').rows.map((row) => row.entry)).toEqual(['kept', 'outer']);
  });

  it('names the statement that failed and keeps working after it', () => {
    expect(() => db.bridge.query('SELECT * FROM no_such_table')).toThrow(/relation "no_such_table" does not exist \[42P01\] in: SELECT \* FROM no_such_table/);
    expect(db.bridge.query<{ one: number }>('SELECT 1 AS one').rows).toEqual([{ one: 1 }]);
  });

  it('cancels a statement past statement_timeout with an error that says so, and the connection stays usable', () => {
    const quick = new PostgresBridge({ url: db.url, statementTimeoutMs: 200 });
    try {
      expect(() => quick.query('SELECT pg_sleep(5)')).toThrow(/ran longer than 0.2 s and was cancelled \(statement_timeout\): SELECT pg_sleep\(5\)/);
      expect(quick.query<{ one: number }>('SELECT 1 AS one').rows).toEqual([{ one: 1 }]);
    } finally {
      quick.close();
    }
  });

  it('says which server refused the connection and what to check, without the password', () => {
    const password = new URL(db.url).password;
    expect(failureOf(withPort(db.url, 1))).toBe('PostgreSQL at 127.0.0.1:1 refused the connection; check store.url (is the server running and listening there?).');
    const wrong = new URL(db.url);
    wrong.password = 'not-the-password';
    const denied = failureOf(wrong.toString());
    expect(denied).toMatch(/^PostgreSQL at 127\.0\.0\.1:\d+ did not let user "hob" in \(password authentication failed for user "hob"\); check the user and password in store.url\.$/);
    expect(denied).not.toContain(password);
    expect(denied).not.toContain('not-the-password');
    const missing = new URL(db.url);
    missing.pathname = '/no_such_db';
    expect(failureOf(missing.toString())).toBe(`PostgreSQL at 127.0.0.1:${db.cluster.port} has no database "no_such_db"; create it (createdb -O hob no_such_db) or fix store.url.`);
    expect(() => new PostgresBridge({ url: 'mysql://hob:secret@db/hob' })).toThrow('store.url must start with postgres:// (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE); it starts with mysql://.');
  });

  it('turns a server that stops answering mid-transaction into an error at the wait limit, keeps nothing of it, and works again on the next call', async () => {
    db.bridge.exec('CREATE TABLE transfers (note TEXT)');
    const proxy = await silentableProxy({ host: db.cluster.host, port: db.cluster.port });
    const flaky = new PostgresBridge({ url: withPort(db.url, proxy.port), statementTimeoutMs: 300, connectTimeoutMs: 2000 });
    try {
      // Connected before the transaction: the worker's start is no part of the wait the cut is measured by.
      flaky.query('SELECT 1');
      let failure: unknown;
      let outcome: unknown;
      try {
        flaky.transaction(() => {
          flaky.query("INSERT INTO transfers VALUES ('first half')");
          proxy.silence();
          try {
            flaky.query("INSERT INTO transfers VALUES ('second half')");
          } catch (error) {
            failure = error;
          }
          // A caller that swallows the error cannot go on in a transaction that is gone.
          flaky.query("INSERT INTO transfers VALUES ('after the cut')");
        });
      } catch (error) {
        outcome = error;
      }
      expect(failure).toBeInstanceOf(PostgresStoreError);
      expect((failure as Error).message).toBe(`PostgreSQL at 127.0.0.1:${proxy.port} did not answer within 4 s; hob dropped the connection and opens a new one on the next call.`);
      expect(outcome).toBeInstanceOf(PostgresStoreError);
      expect((outcome as PostgresStoreError).code).toBe('TRANSACTION_LOST');
      expect((outcome as Error).message).toBe(`The transaction was cut off: PostgreSQL at 127.0.0.1:${proxy.port} stopped answering, and nothing of it was kept.`);
      proxy.restore();
      expect(flaky.query<{ one: number }>('SELECT 1 AS one').rows).toEqual([{ one: 1 }]);
    } finally {
      flaky.close();
      await proxy.close();
    }
    // The server saw the connection end and rolled back the first half.
    await expect.poll(() => db.bridge.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = $1', ['idle in transaction']).rows[0]).toEqual({ n: 0 });
    expect(db.bridge.query('SELECT note FROM transfers').rows).toEqual([]);
  });

  it('works from the bundle: the worker file is built beside the code that starts it', async () => {
    const out = await bundleWithWorker({ probe: 'test/store/postgres/bundle-probe.ts' });
    const printed = execFileSync(process.execPath, [join(out, 'probe.js'), db.url], { encoding: 'utf8', timeout: 15_000 });
    expect(JSON.parse(printed)).toEqual([{ answer: 42 }]);
  });
});
