import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuiltDist } from './support/built-dist.js';
import { CPU_FILE_ENV, type ServerCpu } from './support/file-cpu.js';
import { runClusterBase, SHARED_DIR_ENV, stopSharedCluster } from './support/postgres.js';

/**
 * Runs once before the suite: tests never see the developer's model keys or endpoints, and
 * the bundled CLI (dist/) that process-level tests spawn is fresh (bundled again only when
 * its inputs changed). PostgreSQL tests share one cluster per run, started by the first test
 * file that needs it (test/support/postgres.ts) and stopped here after the run.
 */
export default function setup(): () => void {
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('OPENAI_') || name.startsWith('HOB_VOICE_') || name === 'HOB_CONFIG') delete process.env[name];
  }
  ensureBuiltDist(join(import.meta.dirname, '..'));
  // The run's temp folder, in memory when /dev/shm has room: every test's data dir, SQLite
  // file and workspace (test/support/temp-dirs.ts), and those of the processes tests start
  // (they inherit TMPDIR), with no journal commits or disk flushes behind their writes and
  // closes. The workers are started after this, with this environment.
  const runTemp = mkdtempSync(join(runClusterBase(), 'hob-test-run-'));
  process.env.TMPDIR = runTemp;
  const shared = mkdtempSync(join(tmpdir(), 'hob-pg-run-'));
  process.env[SHARED_DIR_ENV] = shared;
  return () => {
    const { serverCpuSeconds } = stopSharedCluster(shared);
    // For bench/test-suite.ts: the server's CPU is no test process's (pg_ctl detaches it).
    const cpuFile = process.env[CPU_FILE_ENV];
    if (cpuFile && serverCpuSeconds !== undefined) appendFileSync(cpuFile, `${JSON.stringify({ postgresServer: serverCpuSeconds } satisfies ServerCpu)}\n`);
    rmSync(runTemp, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  };
}
