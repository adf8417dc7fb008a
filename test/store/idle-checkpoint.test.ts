import Database from 'better-sqlite3';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/store/sqlite/db.js';
import { IDLE_CHECKPOINT_COMMITS, IdleCheckpoint } from '../../src/store/sqlite/idle-checkpoint.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';

/**
 * SQLite's WAL is copied back into the database file at hob's idle moments
 * (src/store/sqlite/idle-checkpoint.ts), not inside the commit of an answer someone waits
 * for. What shows it from outside: the database file alone (a copy without its `-wal`, as a
 * backup that copies one file takes it) holds what was written once hob has had a quiet moment,
 * and not before.
 */
const clock = { now: () => Date.parse('2026-12-03T02:00:00Z') };
const opened: { close(): void }[] = [];
afterEach(() => {
  for (const one of opened.splice(0).reverse()) one.close();
});

/** The rows of `table` in a copy of the database file alone (no WAL beside it). */
function rowsInFileAlone(path: string, table: string): number {
  const copy = join(tempDir('hob-idle-checkpoint-copy-'), 'copy.db');
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    return exists ? (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n : 0;
  } finally {
    db.close();
  }
}

function fileWithTable(): { db: Db; path: string; write(count: number, checkpoints: IdleCheckpoint): void } {
  const path = join(tempDir('hob-idle-checkpoint-'), 'hob.db');
  const db = openDatabase(path);
  opened.push(db);
  // Anything before this test's writes is in the file itself.
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const insert = db.prepare('INSERT INTO notes (text) VALUES (?)');
  return {
    db,
    path,
    write(count, checkpoints) {
      for (let at = 0; at < count; at++) {
        db.transaction(() => insert.run(`note ${at}`)).immediate();
        checkpoints.committed();
      }
    },
  };
}

const quickLook = { windowMs: 10 };

describe('WAL checkpoints at idle moments', () => {
  it('after enough commits, the next idle moment puts them into the database file itself', async () => {
    const { path, write, db } = fileWithTable();
    const checkpoints = new IdleCheckpoint(db, { afterCommits: 5, idle: quickLook });
    opened.push(checkpoints);
    write(5, checkpoints);
    expect(rowsInFileAlone(path, 'notes')).toBe(0);
    await sleep(80);
    expect(rowsInFileAlone(path, 'notes')).toBe(5);
  });

  it('fewer commits than that stay in the WAL, where SQLite reads them as always', async () => {
    const { path, write, db } = fileWithTable();
    const checkpoints = new IdleCheckpoint(db, { afterCommits: 5, idle: quickLook });
    opened.push(checkpoints);
    write(4, checkpoints);
    await sleep(80);
    expect(rowsInFileAlone(path, 'notes')).toBe(0);
    expect((db.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n).toBe(4);
    // The fifth commit is the one that asks for a checkpoint.
    write(1, checkpoints);
    await sleep(80);
    expect(rowsInFileAlone(path, 'notes')).toBe(5);
  });

  it('a store closed before its idle moment neither checkpoints nor fails afterwards', async () => {
    const { path, write, db } = fileWithTable();
    const errors: unknown[] = [];
    const checkpoints = new IdleCheckpoint(db, { afterCommits: 2, idle: quickLook, onError: (error) => errors.push(error) });
    write(2, checkpoints);
    checkpoints.close();
    await sleep(80);
    expect(rowsInFileAlone(path, 'notes')).toBe(0);
    expect(errors).toEqual([]);
  });

  it("hob's store counts its own commits: an answer's rows reach the database file after a quiet moment", async () => {
    const path = join(tempDir('hob-idle-checkpoint-store-'), 'hob.db');
    const store = openSqliteStore(path, { clock });
    opened.push(store);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const session = store.conversations.activeSession('telegram:42');
    for (let at = 0; at < IDLE_CHECKPOINT_COMMITS; at++) {
      store.transaction(() => store.conversations.appendMessage(session.id, { role: 'user', content: [{ type: 'text', text: `message ${at}` }] }, { personId: 'p42' }));
    }
    expect(rowsInFileAlone(path, 'messages')).toBeLessThan(IDLE_CHECKPOINT_COMMITS);
    // The default look is 200 ms of an event loop working under a tenth of the time.
    await sleep(700);
    expect(rowsInFileAlone(path, 'messages')).toBe(IDLE_CHECKPOINT_COMMITS);
  });
});
