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
    // Four workers on two cores: most of a test's time is spent waiting (on a fake, a timer, a
    // process), so the other workers' files run meanwhile. vitest's default here is one. With
    // three, a fresh clone's run kept 1.5 of the 2 cores busy on average (100.8 s); with four,
    // 90.7 s on the same commit (2026-12-02): the imports cost more (four workers import hob
    // and the libraries) but less than the idle they fill. Four was slower when the suite's CPU
    // was ~20% higher (100.9 s against 98-111 s with three).
    maxWorkers: 4,
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
