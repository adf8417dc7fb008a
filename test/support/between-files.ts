import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { CPU_FILE_ENV, cpuNow, type FileCpu } from './file-cpu.js';
import { removeTempDirs } from './temp-dirs.js';

/**
 * Runs in every test file (vitest.config.ts `setupFiles`). Workers run file after file in one
 * process (`isolate: false`), so whatever a file changed globally and left would be seen by
 * the next one: after each file, timers are real again, stubbed globals are restored, and the
 * temp folders made by tempDir are removed, a file later (test/support/temp-dirs.ts).
 */

// The file's CPU, when bench/test-suite.ts asks for it (test/support/file-cpu.ts). Registered
// first, so its afterAll runs after every other (vitest runs afterAll hooks last-in first-out).
const cpuFile = process.env[CPU_FILE_ENV];
if (cpuFile) {
  const start = cpuNow();
  let collected = start;
  beforeAll(() => {
    collected = cpuNow();
  });
  afterAll(() => {
    const line: FileCpu = { file: expect.getState().testPath ?? '?', pid: process.pid, start, collected, end: cpuNow() };
    appendFileSync(cpuFile, `${JSON.stringify(line)}\n`);
  });
}

afterAll(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  removeTempDirs();
});
