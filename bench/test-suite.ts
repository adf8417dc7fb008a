/**
 * `npm test`'s wall time: one whole run of the suite (`vitest run`, as `npm test` runs it),
 * with the CPU time it took (user + system, the test workers and every process they started)
 * and the files that took longest. On a machine doing other work the wall time grows with the
 * load and the CPU time barely does, so compare runs by both. It takes as long as the suite
 * itself; `npm run bench` leaves it out when HOB_BENCH_SKIP_TESTS=1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fmt, runIfMain, type BenchResult } from './stats.js';

const root = join(import.meta.dirname, '..');

type FileReport = { name: string; startTime: number; endTime: number; status: string };
type Report = { numTotalTests: number; numPassedTests: number; numFailedTests: number; numPendingTests: number; testResults: FileReport[] };

/** CPU seconds of this process's waited-for children (Linux: /proc/self/stat cutime + cstime), or NaN. */
function childrenCpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After "pid (comm) ": state is field 3, so cutime (16) and cstime (17) sit at 13 and 14.
    const ticks = Number(fields[13]) + Number(fields[14]);
    return ticks / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

function runSuite(outputFile: string): Promise<{ wallSeconds: number; cpuSeconds: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const cpuBefore = childrenCpuSeconds();
    const started = performance.now();
    const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const child = spawn(process.execPath, [vitest, 'run', '--reporter=dot', '--reporter=json', `--outputFile.json=${outputFile}`], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ wallSeconds: (performance.now() - started) / 1000, cpuSeconds: childrenCpuSeconds() - cpuBefore, code }));
  });
}

export async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hob-bench-tests-'));
  try {
    const outputFile = join(dir, 'report.json');
    const { wallSeconds, cpuSeconds, code } = await runSuite(outputFile);
    const report = JSON.parse(readFileSync(outputFile, 'utf8')) as Report;
    const files = report.testResults.map((file) => ({ name: relative(root, file.name), seconds: (file.endTime - file.startTime) / 1000, failed: file.status === 'failed' }));
    const summed = files.reduce((total, file) => total + file.seconds, 0);
    const longest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
    console.log(`vitest exited ${code}; ${files.length} files, ${report.numTotalTests} tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`);
    for (const file of files.filter((f) => f.failed)) console.log(`  failed: ${file.name}`);
    console.log(`longest files: ${longest.map((file) => `${file.name} ${fmt(file.seconds)} s`).join(', ')}`);
    const line = `npm test (vitest run, ${cpus().length} cores): ${fmt(wallSeconds)} s wall, ${fmt(cpuSeconds)} s CPU (user + system), files' own durations summed ${fmt(summed)} s; ${report.numPassedTests} passed, ${report.numFailedTests} failed`;
    console.log(line);
    return { name: 'test-suite', summary: [line] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
