import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/db.js';
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
});
