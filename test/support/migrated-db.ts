import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openDatabase } from '../../src/store/sqlite/db.js';

/** The run's folder (test/global-setup.ts; test/support/postgres.ts's SHARED_DIR_ENV, not imported: it loads pg). */
const RUN_DIR_ENV = 'HOB_TEST_POSTGRES_DIR';

let template: string | undefined;

/**
 * Puts an empty SQLite file with every migration applied at `path` (unless a file is there
 * already: a test reopening its data dir keeps its rows), and returns `path`. Applying the
 * migrations one by one costs a test file ~15 ms of CPU and ~100 ms of disk waits per open;
 * the migrations are built once per worker process, and each test gets a copy. Opening the
 * copy still runs hob's own `migrate` (which then finds nothing to do), so what tests open is
 * what hob opens; the migrations themselves are tested in test/store.
 */
export function migratedDbFile(path: string): string {
  if (existsSync(path)) return path;
  if (template === undefined) {
    // In the run's folder, which the global teardown removes: a worker is ended by vitest
    // without an 'exit' event, so a folder of its own was left in the temp dir after each run.
    const runDir = process.env[RUN_DIR_ENV];
    const dir = mkdtempSync(join(runDir && existsSync(runDir) ? runDir : tmpdir(), 'hob-db-template-'));
    if (!runDir) process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'hob.db');
    // close() checkpoints the write-ahead log into the file: the copy is whole on its own.
    openDatabase(file).close();
    template = file;
  }
  mkdirSync(dirname(path), { recursive: true });
  copyFileSync(template, path);
  return path;
}
