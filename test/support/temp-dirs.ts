import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folders this test file made; test/support/between-files.ts removes them after it. */
const made: string[] = [];

/** A new empty folder under the system's temp folder, removed when the test file ends. */
export function tempDir(prefix = 'hob-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * Removes the folders the file made. A process a test killed may still be writing into one as
 * it goes: removal is retried, and a folder that still cannot go is left rather than failing
 * the file.
 */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      // left for the system's temp cleaning
    }
  }
}
