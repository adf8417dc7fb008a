import { systemClock } from '../../src/core/clock.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/store.js';

/** The SQLite file under a store, for tests that look at rows directly (the store must be SQLite). */
export function sqliteDb(store: Store): Db {
  if (!(store instanceof SqliteStore)) throw new Error(`this test reads SQLite rows, but the store is ${store.kind}`);
  return store.db;
}

/** A SQLite store over an already open file (tests that open the file themselves). */
export function storeOver(db: Db, clock: { now(): number } = systemClock): SqliteStore {
  return new SqliteStore(db, db.name, { clock });
}
