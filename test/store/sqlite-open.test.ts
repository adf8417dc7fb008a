import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase, PAGE_CACHE_KIB } from '../../src/store/sqlite/db.js';
import { migrations } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../support/engine.js';

/**
 * hob's first start on a data_dir writes the schema into a new file without waiting on the
 * disk; what it then serves from is the same as on every later start: the whole schema, in
 * WAL mode, each commit as durable as before (`synchronous = NORMAL`, 1).
 */
describe('opening the SQLite file', () => {
  it('gives a new file the whole schema and the usual durability', () => {
    const path = join(tempDir('hob-sqlite-open-'), 'hob.db');
    const fresh = openDatabase(path);
    expect(fresh.pragma('user_version', { simple: true })).toBe(migrations.length);
    expect(fresh.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(fresh.pragma('synchronous', { simple: true })).toBe(1);
    fresh.prepare("INSERT INTO token_calibration (model, state, updated_at) VALUES ('kept', 'yes', 1)").run();
    fresh.close();

    const again = openDatabase(path);
    expect(again.pragma('synchronous', { simple: true })).toBe(1);
    expect(again.prepare("SELECT state FROM token_calibration WHERE model = 'kept'").get()).toEqual({ state: 'yes' });
    again.close();
  });

  it('leaves a file it cannot bring up to date as the older hob wrote it', () => {
    const path = join(tempDir('hob-sqlite-upgrade-'), 'hob.db');
    // A file of an older hob, two versions behind: the next migration adds link_failures, and the
    // one after cannot create token_calibration, a table of that name being there already.
    const failing = migrations.findIndex((sql) => sql.includes('CREATE TABLE token_calibration'));
    expect(migrations[failing - 1]).toContain('CREATE TABLE link_failures');
    const older = new Database(path);
    for (const sql of migrations.slice(0, failing - 1)) older.exec(sql);
    older.pragma(`user_version = ${failing - 1}`);
    older.exec('CREATE TABLE token_calibration (kept TEXT)');
    older.close();

    expect(() => openDatabase(path)).toThrow(/token_calibration already exists/);
    const after = new Database(path);
    expect(after.pragma('user_version', { simple: true })).toBe(failing - 1);
    // Not half of the way either: the migration before the failing one is undone with it.
    expect(after.prepare("SELECT name FROM sqlite_master WHERE name IN ('link_failures', 'tasks')").all()).toEqual([]);
    after.close();
  });
});

/**
 * It keeps at most PAGE_CACHE_KIB of itself in SQLite's page cache (malloc'd memory of `hob
 * start` that would otherwise grow with the file up to better-sqlite3's 16 MB), and a file
 * larger than that still reads back whole.
 */
describe("SQLite's page cache", () => {
  it('is capped below better-sqlite3’s 16 MB', () => {
    const db = openDatabase(join(tempDir('hob-page-cache-'), 'hob.db'));
    expect(db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
    expect(PAGE_CACHE_KIB).toBeLessThan(16_000);
    db.close();
  });

  it('reads back every row of a file twice the size of the cache', () => {
    const db = openDatabase(join(tempDir('hob-page-cache-'), 'hob.db'));
    const text = (id: number) => `${id}:`.padEnd(8_000, String.fromCharCode(97 + (id % 26)));
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
    const rows = Math.ceil((2 * PAGE_CACHE_KIB * 1024) / 8_000);
    const insert = db.prepare('INSERT INTO notes (id, text) VALUES (?, ?)');
    db.transaction(() => {
      for (let id = 0; id < rows; id++) insert.run(id, text(id));
    })();
    const read = db.prepare('SELECT id, text FROM notes ORDER BY id').all() as { id: number; text: string }[];
    expect(read).toHaveLength(rows);
    expect(read.every((row) => row.text === text(row.id))).toBe(true);
    db.close();
  });
});
