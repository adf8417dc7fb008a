/**
 * The store as the app opens it: SQLite at once; the PostgreSQL store's code (its
 * repositories, migrations and worker bridge, ~70 KB) loaded only when the config names it.
 * `hob start` on SQLite (the default) then neither reads nor compiles it on the way to its
 * first answer.
 */
import { postgresUrl, sqlitePath, type StoreSettings } from './settings.js';
import { openSqliteStore } from './sqlite/store.js';
import type { Store, StoreOptions } from './store.js';

/** Opens the store and brings its schema up to date (as open.ts's `openStore`). */
export async function openStoreLazily(settings: StoreSettings, options: StoreOptions): Promise<Store> {
  if (settings.store?.kind !== 'postgres') return openSqliteStore(sqlitePath(settings.dataDir), options);
  const url = postgresUrl(settings);
  const { openPostgresStore } = await import('./postgres/store.js');
  return openPostgresStore(url, options);
}
