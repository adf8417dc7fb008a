import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, PAGE_CACHE_KIB } from '../../src/store/sqlite/db.js';
import { tempDir } from '../support/engine.js';

/**
 * hob's SQLite file keeps at most PAGE_CACHE_KIB of itself in SQLite's page cache (malloc'd
 * memory of `hob start` that would otherwise grow with the file up to better-sqlite3's 16 MB),
 * and a database larger than that still reads back whole.
 */
describe("SQLite's page cache", () => {
  it('is capped below better-sqlite3’s 16 MB', () => {
    const db = openDatabase(join(tempDir('hob-page-cache-'), 'hob.db'));
    try {
      expect(db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
      expect(PAGE_CACHE_KIB).toBeLessThan(16_000);
    } finally {
      db.close();
    }
  });

  it('reads back every row of a file twice the size of the cache', () => {
    const db = openDatabase(join(tempDir('hob-page-cache-'), 'hob.db'));
    try {
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
      const rows = (2 * PAGE_CACHE_KIB * 1024) / 1000;
      const insert = db.prepare('INSERT INTO notes (id, text) VALUES (?, ?)');
      db.transaction(() => {
        for (let id = 0; id < rows; id++) insert.run(id, `${id}:`.padEnd(1000, String.fromCharCode(97 + (id % 26))));
      })();
      const read = db.prepare('SELECT id, text FROM notes ORDER BY id').all() as { id: number; text: string }[];
      expect(read).toHaveLength(rows);
      expect(read.every((row) => row.text === `${row.id}:`.padEnd(1000, String.fromCharCode(97 + (row.id % 26))))).toBe(true);
    } finally {
      db.close();
    }
  });
});
