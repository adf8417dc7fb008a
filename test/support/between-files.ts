import { afterAll, vi } from 'vitest';
import { removeTempDirs } from './temp-dirs.js';

/**
 * Runs in every test file (vitest.config.ts `setupFiles`). Workers run file after file in one
 * process (`isolate: false`), so whatever a file changed globally and left would be seen by
 * the next one: after each file, timers are real again, stubbed globals are restored, and the
 * temp folders made by tempDir are removed, a file later (test/support/temp-dirs.ts).
 */
afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  removeTempDirs();
});
