/** Opening the store a config names: the SQLite file in data_dir (the default). */
import { join } from 'node:path';
import { openSqliteStore } from './sqlite/store.js';
import type { Store, StoreOptions } from './store.js';

/** The SQLite store's file in a data dir. */
export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'hob.db');
}

/** Opens the store and brings its schema up to date. */
export function openStore(settings: { dataDir: string }, options: StoreOptions): Store {
  return openSqliteStore(sqlitePath(settings.dataDir), options);
}
