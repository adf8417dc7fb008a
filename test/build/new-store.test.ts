import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { NEW_STORE, writeNewStore } from '../../scripts/new-store.mjs';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { migrations } from '../../src/store/sqlite/migrations.js';
import { tempDir } from '../support/temp-dirs.js';

/**
 * The build writes the SQLite file a new store starts as (scripts/new-store.mjs), and a first
 * start copies it instead of migrating a new file (src/store/sqlite/db.ts): the store it gets
 * is the one the migrations would have made, and nothing a person already has is replaced.
 */
const schemaOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  const schema = { version: db.pragma('user_version', { simple: true }), objects: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name').all() };
  db.close();
  return schema;
};

let built = '';
beforeAll(async () => {
  const dir = tempDir('hob-new-store-');
  expect(await writeNewStore(dir)).toBe(true);
  built = join(dir, NEW_STORE);
});

describe('a new store', () => {
  it("starts as the build's file, which holds the schema the migrations make; in WAL, with the usual durability", () => {
    const dir = tempDir('hob-new-store-open-');
    const migrated = openDatabase(join(dir, 'migrated.db'), { newStore: join(dir, 'none.db') });
    migrated.close();
    expect(schemaOf(built)).toEqual(schemaOf(join(dir, 'migrated.db')));
    expect(schemaOf(built).version).toBe(migrations.length);

    // A copy of it with a mark of its own: the new store is that file.
    const marked = join(dir, 'marked.db');
    copyFileSync(built, marked);
    const mark = new Database(marked);
    mark.exec('CREATE TABLE made_at_build (x)');
    mark.close();
    const store = openDatabase(join(dir, 'hob.db'), { newStore: marked });
    expect(store.prepare("SELECT name FROM sqlite_master WHERE name = 'made_at_build'").all()).toEqual([{ name: 'made_at_build' }]);
    expect(store.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.pragma('synchronous', { simple: true })).toBe(1);
    store.prepare("INSERT INTO token_calibration (model, state, updated_at) VALUES ('kept', 'yes', 1)").run();
    store.close();
  });

  it("gets the migrations a build's file lacks, and never replaces a file that is there", () => {
    const dir = tempDir('hob-new-store-older-');
    const older = join(dir, 'older.db');
    const db = new Database(older);
    for (const sql of migrations.slice(0, 3)) db.exec(sql);
    db.pragma('user_version = 3');
    db.close();
    const fromOlder = openDatabase(join(dir, 'hob.db'), { newStore: older });
    expect(fromOlder.pragma('user_version', { simple: true })).toBe(migrations.length);
    fromOlder.prepare("INSERT INTO token_calibration (model, state, updated_at) VALUES ('mine', 'kept', 1)").run();
    fromOlder.close();

    const again = openDatabase(join(dir, 'hob.db'), { newStore: built });
    expect(again.prepare('SELECT model FROM token_calibration').all()).toEqual([{ model: 'mine' }]);
    again.close();
    // Not a database at all: left as it is, and opening it fails as it would have.
    writeFileSync(join(dir, 'notes.db'), 'not sqlite');
    expect(() => openDatabase(join(dir, 'notes.db'), { newStore: built })).toThrow(/not a database/);
    expect(existsSync(join(dir, 'notes.db'))).toBe(true);
  });
});
