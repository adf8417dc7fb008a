/**
 * Applies the PostgreSQL migrations (migrations.ts): each in its own transaction under an
 * advisory lock, so several hob processes starting at once on one database apply each
 * exactly once.
 */
import type { PostgresBridge } from './bridge.js';
import { PostgresStoreError } from './errors.js';
import { postgresMigrations, type PostgresMigration } from './migrations.js';

/** Any constant both sides agree on; hashtext keeps it readable. */
const SCHEMA_LOCK = "pg_advisory_xact_lock(hashtext('hob:schema'))";

/**
 * Brings the database's schema up to date, each migration in its own transaction. A schema
 * newer than this hob knows is refused, with the sentence the SQLite store uses.
 */
export function migratePostgres(bridge: PostgresBridge, migrations: readonly PostgresMigration[] = postgresMigrations, now: () => number = Date.now): { from: number; to: number } {
  const from = bridge.transaction(() => {
    bridge.query(`SELECT ${SCHEMA_LOCK}`);
    bridge.exec('CREATE TABLE IF NOT EXISTS hob_schema (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    return schemaVersion(bridge);
  });
  if (from > migrations.length) {
    throw new PostgresStoreError(
      `The database was written by a newer hob (schema ${from}, this hob knows ${migrations.length}). Upgrade hob or use another store.url.`,
      'SCHEMA_NEWER',
    );
  }
  for (let version = from; version < migrations.length; version++) {
    const migration = migrations[version] as PostgresMigration;
    bridge.transaction(() => {
      bridge.query(`SELECT ${SCHEMA_LOCK}`);
      // Another process may have applied it while this one waited for the lock.
      if (schemaVersion(bridge) > version) return;
      bridge.exec(migration.sql);
      bridge.query('INSERT INTO hob_schema (version, name, applied_at) VALUES ($1, $2, $3)', [version + 1, migration.name, now()]);
    });
  }
  return { from, to: Math.max(from, migrations.length) };
}

function schemaVersion(bridge: PostgresBridge): number {
  return bridge.query<{ version: number | null }>('SELECT max(version) AS version FROM hob_schema').rows[0]?.version ?? 0;
}
