import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresBridge } from '../../../src/store/postgres/bridge.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { postgresMigrations } from '../../../src/store/postgres/migrations.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { bundleWithWorker, postgresSkipReason } from '../../support/postgres.js';
import { postgresDatabase } from '../../support/postgres-fixture.js';
import { NEXT_MIGRATIONS } from './migrate-runner.js';

/** The tables of the SQLite store, by name; PostgreSQL has each (full-text indexes are columns there). */
function sqliteTables(): string[] {
  const db = openDatabase(':memory:');
  try {
    const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%'").all() as { name: string }[];
    return rows.map((row) => row.name).sort();
  } finally {
    db.close();
  }
}

describe.skipIf(postgresSkipReason)(`PostgreSQL schema migrations${postgresSkipReason ? ` (skipped: ${postgresSkipReason})` : ''}`, () => {
  const db = postgresDatabase();

  it('applies every migration to an empty database, with a table for each of the SQLite store’s, and nothing again on restart', () => {
    expect(migratePostgres(db.bridge)).toEqual({ from: 0, to: postgresMigrations.length });
    const tables = db.bridge.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'").rows.map((row) => row.name);
    for (const table of sqliteTables()) expect(tables).toContain(table);
    expect(tables).toEqual(expect.arrayContaining(['message_search', 'memory_vectors', 'hob_schema']));

    // A restart (a new connection) finds the schema current and changes nothing.
    const restarted = new PostgresBridge({ url: db.url });
    try {
      expect(migratePostgres(restarted)).toEqual({ from: postgresMigrations.length, to: postgresMigrations.length });
      expect(restarted.query('SELECT version, name FROM hob_schema ORDER BY version').rows).toEqual(postgresMigrations.map((migration, index) => ({ version: index + 1, name: migration.name })));
    } finally {
      restarted.close();
    }
  });

  it('applies a new migration once when two hob processes start at the same moment', async () => {
    // Bundled as hob is installed: the two processes start without a TypeScript loader, close together.
    const runner = join(await bundleWithWorker({ 'migrate-runner': 'test/store/postgres/migrate-runner.ts' }), 'migrate-runner.js');
    const started = [1, 2].map(
      () =>
        new Promise<number | null>((resolve) => {
          execFile(process.execPath, [runner, db.url], { timeout: 60_000 }, (error) => resolve(error ? (error.code as number) : 0));
        }),
    );
    expect(await Promise.all(started)).toEqual([0, 0]);
    expect(db.bridge.query('SELECT n FROM counter').rows).toEqual([{ n: 1 }]);
    expect(db.bridge.query<{ version: number }>('SELECT max(version) AS version FROM hob_schema').rows[0]?.version).toBe(NEXT_MIGRATIONS.length);
    // A bundle and two processes: longer than the default on a loaded machine.
  }, 60_000);

  it('refuses a database written by a newer hob, with the SQLite store’s sentence', () => {
    const older = postgresMigrations.slice(0, 2);
    expect(() => migratePostgres(db.bridge, older)).toThrow(
      `The database was written by a newer hob (schema ${postgresMigrations.length + 1}, this hob knows 2). Upgrade hob or use another store.url.`,
    );
  });
});
