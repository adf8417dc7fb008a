/**
 * What the `hob start` benchmarks share: a fresh data dir with the fake Anthropic server and
 * the fake Telegram, a config that points hob at them, the bundled CLI spawned as
 * `hob start`, its resident memory from /proc, and stopping it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../test/fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../test/fakes/telegram/index.js';
import { tempDir } from '../test/support/engine.js';
import { cleanEnv, writeConfig } from '../test/support/hob-process.js';

const root = join(import.meta.dirname, '..');
const FIRST_POLL_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 10_000;
/** What hob prints to stderr once every configured channel has started. */
export const RUNNING_LINE = 'hob is running on';

/** One start's surroundings: its own data dir, a fake model and a fake Telegram. */
export type StartFakes = { dir: string; model: FakeAnthropic; telegram: FakeTelegram };

/**
 * Gives `use` a fresh dir (named after `dirPrefix`), the fake Anthropic server and the fake
 * Telegram, and closes them and removes the dir afterwards, whatever `use` did.
 */
export async function withStartFakes<T>(dirPrefix: string, use: (fakes: StartFakes) => Promise<T>): Promise<T> {
  const dir = tempDir(dirPrefix);
  const model = await startFakeAnthropic({ apiKey: 'test' });
  const telegram = await startFakeTelegram({ botUsername: 'hob_bench_bot' });
  try {
    return await use({ dir, model, telegram });
  } finally {
    await telegram.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Writes `config.yaml` in the dir: the data dir there, the fake model, the console off and the
 * fake Telegram allowing user 100. `more` is appended as is: further lines under `channels:`
 * (indented two spaces) or further top-level sections. Returns the file's path.
 */
export function writeStartConfig({ dir, model, telegram }: StartFakes, more = ''): string {
  return writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-bench, api_key: test, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ["100"] }
${more}`,
  );
}

/** A spawned `hob start`. Times are `performance.now()` milliseconds. */
export type StartedHob = {
  child: ChildProcess;
  /** Taken just before the spawn. */
  startedAt: number;
  /** Everything hob wrote to stderr so far. */
  stderr(): string;
  /** Spawn → its running line (RUNNING_LINE for hob) on stderr; undefined until it is printed. */
  runningMs(): number | undefined;
  /** hob's exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Rejects when hob fails to spawn or exits; never resolves. Already observed, so safe to leave unraced. */
  failed: Promise<never>;
  /** SIGTERM and the wait for the exit (SIGKILL if it does not come in time); the exit code. */
  stop(): Promise<number | null>;
};

/** Spawns the bundled CLI as `hob --config <config> start` with a clean environment. */
export function spawnHobStart(config: string): StartedHob {
  return spawnNode(['dist/cli.js', '--config', config, 'start'], RUNNING_LINE);
}

/**
 * Spawns `node <args>` in the repository with a clean environment, stderr kept; `runningLine`
 * is what it prints on stderr once running (`runningMs`). A long-running server such as
 * `hob start` or the floor bot of bench/vs-floor.ts.
 */
export function spawnNode(args: string[], runningLine: string): StartedHob {
  let stderr = '';
  let runningMs: number | undefined;
  const startedAt = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (runningMs === undefined && stderr.includes(runningLine)) runningMs = performance.now() - startedAt;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const failed = new Promise<never>((_, reject) => {
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`${args.join(' ')} exited ${code}\nstderr: ${stderr}`)));
  });
  failed.catch(() => undefined); // raced by callers; unobserved once they are past it
  return { child, startedAt, stderr: () => stderr, runningMs: () => runningMs, exited, failed, stop: () => stop(child, exited) };
}

/** Waits for hob's first getUpdates at the fake Telegram; fails early if hob dies first. */
export async function firstPoll(hob: StartedHob, telegram: FakeTelegram): Promise<void> {
  // The fake notifies its waiters as soon as a getUpdates is answered or parked.
  await Promise.race([telegram.waitForCall('getUpdates', () => true, FIRST_POLL_TIMEOUT_MS), hob.failed]);
}

async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** A process's CPU time so far, user + system, in milliseconds, from /proc (Linux); undefined elsewhere or when it is gone. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * The CPU time of a process's main thread so far, in milliseconds, to the nanosecond (the
 * scheduler's own count, /proc/PID/task/PID/schedstat, Linux); undefined elsewhere or when it
 * is gone. Where JavaScript runs: what a burst of messages queues on, and steadier under load
 * than the burst's wall time.
 */
export function mainThreadCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/** USER_HZ: what /proc counts CPU time in (100 on every Linux hob runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

/** A process's resident set from /proc (Linux), in bytes; undefined elsewhere or when it is gone. */
export function residentBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] !== undefined ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
