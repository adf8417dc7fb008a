import Database from 'better-sqlite3';
import { constants, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from './migrations.js';
import { sqliteAddon } from '../../core/sqlite-addon.js';

export type Db = Database.Database;

/** WAL pages between automatic checkpoints (SQLite's default is 1,000; see openDatabase). */
export const WAL_CHECKPOINT_PAGES = 4000;

/**
 * The most SQLite keeps of the file in its own page cache (malloc'd), in KiB: SQLite's own
 * default, 2 MB. The cache keeps every page it wrote or read until it is full, and hob's file
 * grows ~1.2 KB a message (the histories, the outbox), so a larger cache only meant a longer
 * climb: with better-sqlite3's 16 MB malloc's heap grew for ~15,000 messages, with 8 MB for
 * ~9,000; with 2 MB it is flat from ~2,500 (bench/memory-where.ts soak). What the cache no
 * longer holds is read through MMAP_BYTES below, not copied in from the OS.
 */
export const PAGE_CACHE_KIB = 2_000;

/**
 * How much of the file SQLite reads through a memory map instead of `read()` into its cache:
 * 256 MB, more than the file of a person with 100,000 memory entries. A page read this way is
 * the OS's own copy, shared with its file cache and given back under memory pressure, where the
 * cache's copy is malloc'd memory that stays. memory_search over 10,000 entries (a 7.5 MB file
 * read again and again) cost ~2.2 ms of CPU a search with an 8 MB cache, ~3.3 with 2 MB and no
 * map (most of it copying pages in), ~2.5 with 2 MB and the map. Writes still go through the
 * cache and the WAL as before.
 */
export const MMAP_BYTES = 256 * 1024 * 1024;

/**
 * The file a new store starts as, when the build made one (dist/new-store.db,
 * scripts/new-store.mjs: every migration applied): copying it is ~10 ms less of a first start
 * than writing the schema. Beside the bundled chunk that holds this code; none beside the
 * sources, where a new file is migrated.
 */
const NEW_STORE = fileURLToPath(new URL('./new-store.db', import.meta.url));

/**
 * Opens (creating if needed) hob's SQLite file in WAL mode and brings its schema up to date.
 * One process writes; readers never block the writer. `newStore`: the file a new one starts as.
 */
export function openDatabase(path: string, { newStore = NEW_STORE }: { newStore?: string } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const copied = path !== ':memory:' && startAsCopy(path, newStore);
  const db = new Database(path, sqliteAddon());
  // A new file (hob's first start on this data_dir) gets its schema without waiting on the
  // disk: with `synchronous = NORMAL` the switch to WAL and the migrations make eight fsyncs
  // (tens of ms before the first answer). Only a machine crash in those milliseconds could
  // leave the file half-written, and it holds nothing yet; everything after is NORMAL.
  const empty = copied || (db.pragma('user_version', { simple: true }) === 0 && (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n === 0);
  if (empty) db.pragma('synchronous = OFF');
  db.pragma('journal_mode = WAL');
  // A checkpoint copies every page the WAL changed since the last one back into the file and
  // syncs both (~3 ms of waiting here, on the thread that commits). At SQLite's default (every
  // 1,000 pages, ~30 answers) the same few pages (the session, inbox and outbox rows, the
  // search index's structure) were copied again and again, and a burst of new people always
  // met one. Every 4,000 pages (a WAL of up to 16 MB): a quarter of the syncs, far fewer
  // copies, less of the store's CPU per answer (bench/answer-writes.ts; README, Benchmarks).
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
  // A savepoint keeps the pages it changes in a statement journal, to undo them alone: the
  // router routes a turn's messages in one commit, each in a savepoint (gateway/router.ts),
  // and past 64 KB SQLite spilled that journal to a temporary file (~15 writes a message in a
  // burst of new people). In memory it is a copy of the pages and nothing more; so are the
  // temporary B-trees of a sort, which stay as small as the results hob asks for.
  db.pragma('temp_store = MEMORY');
  migrate(db);
  db.pragma('synchronous = NORMAL');
  cacheStatements(db);
  return db;
}

/** A store not there yet starts as a copy of `newStore`, when there is one; false otherwise. */
function startAsCopy(path: string, newStore: string): boolean {
  if (existsSync(path) || !existsSync(newStore)) return false;
  try {
    // Never over a file another process made meanwhile.
    copyFileSync(newStore, path, constants.COPYFILE_EXCL);
    return true;
  } catch {
    return false;
  }
}

/**
 * Repositories call `db.prepare(sql)` where they use a statement; compiling SQL is the
 * costly part, so each distinct SQL text is compiled once per connection and reused. hob
 * only runs statements with run/get/all (never iterate, raw or pluck), so sharing is safe.
 */
function cacheStatements(db: Db): void {
  const compile = db.prepare.bind(db);
  const compiled = new Map<string, ReturnType<typeof compile>>();
  db.prepare = ((sql: string) => {
    let statement = compiled.get(sql);
    if (!statement) {
      statement = compile(sql);
      compiled.set(sql, statement);
    }
    return statement;
  }) as Db['prepare'];
}

/**
 * Applies every migration newer than the file's user_version, all in one transaction: the file
 * is at its old version or at the newest, never between (a new file's fourteen took ~2 ms less
 * of the first start than a transaction each).
 */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `The database was written by a newer hob (schema ${current}, this hob knows ${migrations.length}). Upgrade hob or use another data_dir.`,
    );
  }
  if (current === migrations.length) return;
  db.transaction(() => {
    for (const sql of migrations.slice(current)) db.exec(sql);
    db.pragma(`user_version = ${migrations.length}`);
  })();
}
