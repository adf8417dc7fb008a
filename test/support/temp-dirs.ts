import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folders the running test file made, and those of the file before it. */
let made: string[] = [];
let settling: string[] = [];

/** A new empty folder under the system's temp folder, removed after its test file (see removeTempDirs). */
export function tempDir(prefix = 'hob-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * Called after each test file (test/support/between-files.ts): removes the folders of the file
 * before it, and keeps this file's until the next one ends. Work a file started may outlive it
 * by a moment — a log file still being opened, a killed process still writing — and would
 * fail in the next file if its folder were gone. What is left when the worker exits goes then.
 */
export function removeTempDirs(): void {
  const done = settling;
  settling = made;
  made = [];
  remove(done);
}

process.once('exit', () => remove([...settling, ...made]));

function remove(dirs: string[]): void {
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      // left for the system's temp cleaning
    }
  }
}
