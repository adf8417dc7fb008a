import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/support/between-files.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Three workers on two cores: most of a test's time is spent waiting (on a fake, a timer, a
    // process), so the other workers' files run meanwhile. vitest's default here is one. On
    // test/cli, scheduler and mcp (25 files, the process-heavy part) three took 86–242 s of
    // wall where two took 108–381 s in three pairs on the loaded VM, with about the same CPU.
    maxWorkers: 3,
    // Each worker process runs file after file without restarting: importing hob and the client
    // libraries anew for each of ~135 files cost about a second of CPU each. Files share nothing
    // else: each starts its own fakes, temp folders and databases, and env stubs are undone.
    isolate: false,
    unstubEnvs: true,
    sequence: { sequencer: LongestFirstSequencer },
    // Keeps the TypeScript vite compiled for the workers on disk (node_modules/.experimental-
    // vitest-cache, keyed by each file's content and the config), so a run compiles only the
    // files changed since the last one: vitest's own process spent 7.4 s of CPU on 47 files
    // without it, 4.0 s with it. A fresh clone compiles everything once, as before.
    experimental: { fsModuleCache: true },
  },
});
