/** Opening the store a config names at once: the SQLite file in data_dir (the default), or PostgreSQL. */
import { openPostgresStore } from './postgres/store.js';
import { postgresUrl, sqlitePath, type StoreSettings } from './settings.js';
import { openSqliteStore } from './sqlite/store.js';
import type { Store, StoreOptions } from './store.js';

export { DATABASE_URL_ENV, postgresUrl, sqlitePath, type StoreSettings } from './settings.js';

/**
 * Opens the store and brings its schema up to date, for the commands that read or change it
 * and exit (`hob jobs`, `hob sessions`...). The app opens it with `openStoreLazily`.
 */
export function openStore(settings: StoreSettings, options: StoreOptions): Store {
  if (settings.store?.kind === 'postgres') return openPostgresStore(postgresUrl(settings), options);
  return openSqliteStore(sqlitePath(settings.dataDir), options);
}
