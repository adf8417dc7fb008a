/**
 * `npm test`'s wall time: one whole run of the suite (`vitest run`, as `npm test` runs it),
 * with the CPU time it took (user and system, the test workers and every process they started;
 * vitest's own process apart: transforming TypeScript, scheduling, reporting), how the files
 * packed onto the workers, and the files that took longest. On a machine doing other work the
 * wall time grows with the load and the CPU time barely does, so compare runs by both. It
 * takes as long as the suite itself; `npm run bench` leaves it out when HOB_BENCH_SKIP_TESTS=1.
 * HOB_BENCH_TEST_ARGS adds arguments to `vitest run` (e.g. `--maxWorkers=3`) to compare.
 * Each file's CPU (its imports, its tests, the processes it started) is recorded by
 * test/support/file-cpu.ts; the heaviest 15 are printed (HOB_BENCH_TEST_CPU_FILES=200 for all).
 * HOB_BENCH_TEST_DURATIONS=write records each file's seconds in test/support/durations.json,
 * the order test/support/sequencer.ts gives a fresh clone (best from a whole run on a quiet machine).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { CPU_FILE_ENV, procCpu, type FileCpu, type ServerCpu } from '../test/support/file-cpu.js';
import { fmt, runIfMain, type BenchResult } from './stats.js';

const root = join(import.meta.dirname, '..');

type FileReport = { name: string; startTime: number; endTime: number; status: string };
type Report = { numTotalTests: number; numPassedTests: number; numFailedTests: number; numPendingTests: number; testResults: FileReport[] };
type Cpu = { user: number; system: number };

/** CPU seconds of this process's waited-for children. */
function childrenCpu(): Cpu {
  const cpu = procCpu();
  return cpu ? { user: cpu.childrenUser, system: cpu.childrenSystem } : { user: Number.NaN, system: Number.NaN };
}

/** Printed to stderr by vitest's own process as it exits: its CPU without the workers'. */
const OWN_CPU_MARKER = 'hob-bench-vitest-cpu';
const reportOwnCpu = `process.on('exit', () => { const c = process.cpuUsage(); process.stderr.write('${OWN_CPU_MARKER} ' + c.user / 1e6 + ' ' + c.system / 1e6 + '\\n'); });`;

type SuiteRun = { startedAt: number; endedAt: number; wallSeconds: number; cpu: Cpu; vitestCpu: Cpu | undefined; code: number | null };

function runSuite(outputFile: string, cpuFile: string, extraArgs: string[]): Promise<SuiteRun> {
  return new Promise((resolve, reject) => {
    const before = childrenCpu();
    const startedAt = Date.now();
    const started = performance.now();
    const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
    const args = ['--import', `data:text/javascript,${encodeURIComponent(reportOwnCpu)}`, vitest, 'run', '--reporter=dot', '--reporter=json', `--outputFile.json=${outputFile}`, ...extraArgs];
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, [CPU_FILE_ENV]: cpuFile } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const after = childrenCpu();
      const own = new RegExp(`${OWN_CPU_MARKER} ([\\d.]+) ([\\d.]+)`).exec(stderr);
      resolve({
        startedAt,
        endedAt: Date.now(),
        wallSeconds: (performance.now() - started) / 1000,
        cpu: { user: after.user - before.user, system: after.system - before.system },
        vitestCpu: own ? { user: Number(own[1]), system: Number(own[2]) } : undefined,
        code,
      });
    });
  });
}

type File = { name: string; start: number; end: number; failed: boolean };

/**
 * How the files packed onto the workers: the most files that ran at once (the worker count),
 * the worker-seconds spent outside a file's tests between the first file's start and the last
 * file's end (a file's time in the report runs from its first test's start to its last test's
 * end, so this is its imports and beforeAll/afterAll hooks plus idling), and the tail — the seconds at the end when fewer files ran than there are workers —
 * with the files still running then. A tail as long as one file means it started too late.
 */
export function packing(files: File[]): { workers: number; idleSeconds: number; tailSeconds: number; tailFiles: string[] } {
  const events = files.flatMap((file) => [{ at: file.start, step: 1 }, { at: file.end, step: -1 }]).sort((a, b) => a.at - b.at || a.step - b.step);
  let running = 0;
  let workers = 0;
  for (const event of events) workers = Math.max(workers, (running += event.step));
  const first = Math.min(...files.map((file) => file.start));
  const last = Math.max(...files.map((file) => file.end));
  let idle = 0;
  let lastFull = first;
  running = 0;
  let at = first;
  for (const event of events) {
    idle += (workers - running) * (event.at - at);
    at = event.at;
    running += event.step;
    if (running >= workers) lastFull = at;
  }
  // The last moment every worker had a file: from there to the end, some worker waited.
  const tailFiles = files.filter((file) => file.end > lastFull).sort((a, b) => b.end - a.end).map((file) => file.name);
  return { workers, idleSeconds: idle, tailSeconds: last - lastFull, tailFiles };
}

/** One test file's CPU seconds: its imports and collection, its tests and hooks, the processes it started and waited for. */
export type FileCpuSeconds = { name: string; imports: number; tests: number; children: number };

/**
 * Where the workers' CPU went, from the lines test/support/file-cpu.ts wrote: each file's
 * part, and what belongs to no file — each worker's start-up before its first file, its work
 * between files, and processes a file started but that were reaped only after it ended (they
 * count to no file here; `lateChildren` names the files they came after).
 */
export function cpuByFile(lines: FileCpu[]): {
  files: FileCpuSeconds[];
  workerStart: number;
  betweenFiles: number;
  lateChildren: number;
  lateAfter: { name: string; seconds: number }[];
} {
  const byWorker = new Map<number, FileCpu[]>();
  for (const line of lines) byWorker.set(line.pid, [...(byWorker.get(line.pid) ?? []), line]);
  let workerStart = 0;
  let betweenFiles = 0;
  let lateChildren = 0;
  const lateAfter: { name: string; seconds: number }[] = [];
  for (const worker of byWorker.values()) {
    worker.sort((a, b) => a.start[0] - b.start[0]);
    workerStart += worker[0]?.start[0] ?? 0;
    worker.forEach((file, index) => {
      const next = worker[index + 1];
      if (!next) return;
      betweenFiles += next.start[0] - file.end[0];
      const late = next.start[1] - file.end[1];
      lateChildren += late;
      if (late >= 0.05) lateAfter.push({ name: relative(root, file.file), seconds: late });
    });
  }
  const files = lines.map((line) => ({
    name: relative(root, line.file),
    imports: line.collected[0] - line.start[0],
    tests: line.end[0] - line.collected[0],
    children: line.end[1] - line.start[1],
  }));
  return { files, workerStart, betweenFiles, lateChildren, lateAfter: lateAfter.sort((a, b) => b.seconds - a.seconds) };
}

/** The CPU report's lines: the parts of the run, then the files that took most (own + children). */
export function cpuLines(cpu: ReturnType<typeof cpuByFile>, vitestCpu: number | undefined, shown: number): string[] {
  const sum = (pick: (file: FileCpuSeconds) => number) => cpu.files.reduce((total, file) => total + pick(file), 0);
  const total = (file: FileCpuSeconds) => file.imports + file.tests + file.children;
  const heaviest = [...cpu.files].sort((a, b) => total(b) - total(a)).slice(0, shown);
  return [
    `CPU by part: vitest's own process ${vitestCpu === undefined ? '?' : fmt(vitestCpu)} s; workers' start-up ${fmt(cpu.workerStart)} s, between files ${fmt(cpu.betweenFiles)} s; ` +
      `files' imports ${fmt(sum((file) => file.imports))} s, tests ${fmt(sum((file) => file.tests))} s, processes they started ${fmt(sum((file) => file.children))} s ` +
      `(+ ${fmt(cpu.lateChildren)} s reaped after their file ended${cpu.lateAfter.length ? `: after ${cpu.lateAfter.slice(0, 3).map((late) => `${late.name} ${fmt(late.seconds)} s`).join(', ')}` : ''})`,
    `CPU per file (s: imports + tests + children = total), the ${shown} heaviest:`,
    ...heaviest.map((file) => `  ${fmt(file.imports).padStart(5)} + ${fmt(file.tests).padStart(5)} + ${fmt(file.children).padStart(5)} = ${fmt(total(file)).padStart(5)}  ${file.name}`),
  ];
}

/** Writes test/support/durations.json (its `about` kept): each file's seconds, by path, to a tenth. */
function recordDurations(durations: [string, number][]): void {
  const path = join(root, 'test', 'support', 'durations.json');
  const { about } = JSON.parse(readFileSync(path, 'utf8')) as { about: string };
  const seconds = Object.fromEntries(durations.sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, value]) => [name.split(sep).join('/'), Math.round(value * 10) / 10]));
  writeFileSync(path, `${JSON.stringify({ about, seconds }, null, 2)}\n`);
  console.log(`recorded ${durations.length} files' durations in ${relative(root, path)}`);
}

export async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hob-bench-tests-'));
  try {
    const outputFile = join(dir, 'report.json');
    const cpuFile = join(dir, 'cpu.jsonl');
    const extraArgs = (process.env.HOB_BENCH_TEST_ARGS ?? '').split(/\s+/).filter(Boolean);
    const { startedAt, endedAt, wallSeconds, cpu, vitestCpu, code } = await runSuite(outputFile, cpuFile, extraArgs);
    const report = JSON.parse(readFileSync(outputFile, 'utf8')) as Report;
    const files: File[] = report.testResults.map((file) => ({ name: relative(root, file.name), start: file.startTime / 1000, end: file.endTime / 1000, failed: file.status === 'failed' }));
    const seconds = (file: File) => file.end - file.start;
    const summed = files.reduce((total, file) => total + seconds(file), 0);
    const longest = [...files].sort((a, b) => seconds(b) - seconds(a)).slice(0, 5);
    console.log(`vitest exited ${code}; ${files.length} files, ${report.numTotalTests} tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`);
    for (const file of files.filter((f) => f.failed)) console.log(`  failed: ${file.name}`);
    console.log(`longest files: ${longest.map((file) => `${file.name} ${fmt(seconds(file))} s`).join(', ')}`);
    if (process.env.HOB_BENCH_TEST_DURATIONS === 'write' && report.numFailedTests === 0) recordDurations(files.map((file) => [file.name, seconds(file)]));
    const pack = packing(files);
    const firstStart = Math.min(...files.map((file) => file.start));
    const lastEnd = Math.max(...files.map((file) => file.end));
    console.log(
      `packing: ${pack.workers} workers; ${fmt(firstStart - startedAt / 1000)} s from the start to the first test (start-up, global setup, imports), ${fmt(endedAt / 1000 - lastEnd)} s from the last test to the exit (teardown); ` +
        `${fmt(pack.idleSeconds)} worker-seconds between them outside a file's tests (its imports and hooks, or idle); the last ${fmt(pack.tailSeconds)} s not every worker in a file's tests (${pack.tailFiles.slice(0, 3).join(', ')}); ` +
        `on average ${fmt(summed / (lastEnd - firstStart))} of ${pack.workers} workers in a file's tests`,
    );
    if (existsSync(cpuFile)) {
      const lines = readFileSync(cpuFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as FileCpu | ServerCpu);
      const files = lines.filter((line): line is FileCpu => 'file' in line);
      const postgres = lines.find((line): line is ServerCpu => 'postgresServer' in line)?.postgresServer;
      const shown = Number(process.env.HOB_BENCH_TEST_CPU_FILES ?? 15);
      for (const line of cpuLines(cpuByFile(files), vitestCpu && vitestCpu.user + vitestCpu.system, shown)) console.log(line);
      if (postgres !== undefined) console.log(`the shared PostgreSQL server (started by pg_ctl, counted by no test process nor in the CPU above): ${fmt(postgres)} s`);
    }
    const total = cpu.user + cpu.system;
    const own = vitestCpu ? `, of it vitest's own process ${fmt(vitestCpu.user + vitestCpu.system)} s` : '';
    const line = `npm test (vitest run${extraArgs.length ? ` ${extraArgs.join(' ')}` : ''}, ${cpus().length} cores): ${fmt(wallSeconds)} s wall, ${fmt(total)} s CPU (${fmt(cpu.user)} user + ${fmt(cpu.system)} system${own}), files' own durations summed ${fmt(summed)} s; ${fmt(total / wallSeconds)} cores busy on average; ${report.numPassedTests} passed, ${report.numFailedTests} failed`;
    console.log(line);
    return { name: 'test-suite', summary: [line] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
