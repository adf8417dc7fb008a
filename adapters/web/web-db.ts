/**
 * The web channel's own SQLite file, `data_dir/web/web.db`: what a chat platform's servers
 * would keep (people, sign-in codes, sessions, the chats' messages and files). It is shared by
 * `hob start` and `hob web link` (another process), so codes and sessions go through it, never
 * through memory. hob's own database stays the gateway's: the adapter sees only the port.
 */
import Database from 'better-sqlite3';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sqliteAddon } from '../../src/core/sqlite-addon.js';

export type WebDb = Database.Database;

const SCHEMA = [
  `CREATE TABLE people (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE sign_in_codes (
     code_hash TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE TABLE sessions (
     token_hash TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     last_seen_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX sessions_by_user ON sessions (user_id);
   CREATE TABLE messages (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     chat_id TEXT NOT NULL,
     from_bot INTEGER NOT NULL,
     text TEXT NOT NULL,
     plain INTEGER NOT NULL DEFAULT 0,
     buttons TEXT,
     file_id TEXT,
     attachments TEXT,
     nonce TEXT,
     delivery_key TEXT,
     live INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     UNIQUE (chat_id, nonce),
     UNIQUE (chat_id, delivery_key)
   );
   CREATE INDEX messages_by_chat ON messages (chat_id, id);
   CREATE TABLE files (
     id TEXT PRIMARY KEY,
     chat_id TEXT NOT NULL,
     uploaded INTEGER NOT NULL,
     name TEXT NOT NULL,
     mime TEXT NOT NULL,
     size INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   );`,
];

/** The folder for the web channel's files (mode 700: it holds chats and session hashes). */
export function webDir(dataDir: string): string {
  return join(dataDir, 'web');
}

/** Opens (creating if needed) the web channel's database, WAL, schema up to date. */
export function openWebDb(dataDir: string): WebDb {
  const dir = webDir(dataDir);
  mkdirSync(join(dir, 'files'), { recursive: true, mode: 0o700 });
  const path = join(dir, 'web.db');
  const db = new Database(path, sqliteAddon());
  chmodSync(path, 0o600);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // `hob web link` may write while `hob start` does: wait for the other rather than fail.
  db.pragma('busy_timeout = 5000');
  // Immediate: `hob start` and `hob web link` opening a new data_dir at once create it once.
  const upgrade = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA.length) throw new Error(`${path} was written by a newer hob (schema ${version}, this hob knows ${SCHEMA.length}); upgrade hob or use another data_dir.`);
    for (let next = version; next < SCHEMA.length; next++) db.exec(SCHEMA[next] as string);
    db.pragma(`user_version = ${SCHEMA.length}`);
  });
  try {
    upgrade.immediate();
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
