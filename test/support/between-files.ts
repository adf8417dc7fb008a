import { afterAll, vi } from 'vitest';

/**
 * Runs in every test file (vitest.config.ts `setupFiles`). Workers run file after file in one
 * process (`isolate: false`), so whatever a file changed globally and left would be seen by
 * the next one: after each file, timers are real again and stubbed globals are restored.
 */
afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});
