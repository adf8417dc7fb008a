import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { runDoctor } from '../../../src/cli/doctor.js';
import { openStore } from '../../../src/store/open.js';
import { tempDir } from '../../support/engine.js';
import { postgresDatabase } from '../../support/postgres-fixture.js';
import { postgresSkipReason } from '../../support/postgres.js';

const refuse = (() => Promise.reject(new Error('no network in this test'))) as typeof fetch;

describe('store: kind postgres without a URL', () => {
  it('says how to set one instead of falling back to SQLite', () => {
    const config = parseConfig(`data_dir: ${tempDir()}\nstore: { kind: postgres }\n`, { env: {} });
    expect(() => openStore({ dataDir: config.data_dir, store: config.store }, { clock: { now: () => 0 } })).toThrow(/store\.url .*HOB_DATABASE_URL/);
  });

  it('refuses a URL that is not PostgreSQL, naming the key', () => {
    expect(() => parseConfig('store: { kind: postgres, url: "mysql://db/hob" }\n', { env: {} })).toThrow(/store\.url: expected a PostgreSQL URL/);
  });
});

describe.skipIf(postgresSkipReason)('hob doctor on PostgreSQL', () => {
  const db = postgresDatabase();

  it('names the store and how it keeps vectors, never the password', async () => {
    const config = parseConfig(`data_dir: ${tempDir()}\nstore: { kind: postgres, url: "\${HOB_DATABASE_URL}" }\n`, { env: { HOB_DATABASE_URL: db.url } });
    const store = (await runDoctor(config, undefined, refuse)).find((check) => check.name === 'store');
    const { host, password } = new URL(db.url);
    expect(store).toEqual({ name: 'store', ok: true, detail: `PostgreSQL at ${host}; vectors: real[] in PostgreSQL, ranked by hob per person (no pgvector extension in this database)` });
    expect(store?.detail).not.toContain(password);
  });

  it('reports a database it cannot reach as a failed check, without the password', async () => {
    const config = parseConfig(`data_dir: ${tempDir()}\nstore: { kind: postgres, url: "postgres://hob:hunter2secret@127.0.0.1:1/hob" }\n`, { env: {} });
    const store = (await runDoctor(config, undefined, refuse)).find((check) => check.name === 'store');
    expect(store?.ok).toBe(false);
    expect(store?.detail).toBe('PostgreSQL: PostgreSQL at 127.0.0.1:1 refused the connection; check store.url (is the server running and listening there?).');
    expect(store?.detail).not.toContain('hunter2secret');
  });
});
