/**
 * The two processes bench/vs-floor.ts and bench/profile.ts measure against the three fakes:
 * `hob start`, and the floor (bench/floor-bot/, a bare echo bot on the same libraries,
 * bundled as scripts/build.mjs bundles hob, so both load their libraries alike), and either
 * started cold and kept up while a benchmark sends it messages (`startLive`).
 */
import { existsSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { tempDir } from '../test/support/engine.js';
import type { FloorSettings } from './floor-bot/index.js';
import { cpuMs, residentBytes, RUNNING_LINE, spawnNode, type StartedHob } from './hob-process.js';
import { PLATFORMS, ThreeChannels, type Platform } from './three-channels.js';

export type Subject = 'hob' | 'floor';

/**
 * The hob build to run: dist/, or another build of hob in the repository (`BENCH_HOB_DIST=
 * dist-before` measures an earlier commit's `npm run build`, moved there, in the same sitting).
 */
const HOB_DIST = process.env.BENCH_HOB_DIST ?? 'dist';

/** The command a person runs (`hob start`, npm's link to it). */
const BIN = join(import.meta.dirname, '..', 'bin', 'hob.mjs');

/**
 * The node flags on the bin's first line (`#!/usr/bin/env -S node --flag …`): what the
 * kernel and env run for a person's `hob start` is `node --flag … bin/hob.mjs start`, so the
 * benchmarks spawn exactly that (node's own flags for profilers go after them, as node takes them).
 */
export function binNodeFlags(bin = BIN): string[] {
  const fd = openSync(bin, 'r');
  const head = Buffer.alloc(256);
  const length = readSync(fd, head, 0, head.length, 0);
  closeSync(fd);
  const line = head.subarray(0, length).toString('utf8').split('\n', 1)[0] ?? '';
  const words = line.replace(/^#!/, '').trim().split(/\s+/);
  const node = words.findIndex((word) => word === 'node' || word.endsWith('/node'));
  if (node < 0) throw new Error(`${bin}: its first line (${line}) does not start node`);
  return words.slice(node + 1);
}

/** node's arguments to start hob as a person's shell does: the bin's flags, `nodeFlags` (profilers), the bin; hob's own arguments follow. */
export function binLaunch(nodeFlags: readonly string[] = []): string[] {
  return [...binNodeFlags(), ...nodeFlags, BIN];
}

/** What the floor prints on stderr once all three channels are up. */
const FLOOR_RUNNING_LINE = 'floor is running';

/** Bundles the floor bot into `dir`; returns its entry point. */
export async function bundleFloor(dir: string): Promise<string> {
  await build({
    entryPoints: [join(import.meta.dirname, 'floor-bot', 'index.ts')],
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __floorRequire } from 'node:module'; const require = __floorRequire(import.meta.url);" },
    // As dist/ has them: bench/profile.ts maps the floor's costs to its packages too.
    sourcemap: true,
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
  return join(dir, 'index.mjs');
}

/**
 * Spawns the subject cold against the fakes, its files in `dir`, `people` people allowed on
 * each platform (hob denies anyone else), with `nodeFlags` for node itself (profilers).
 * hob starts as a person starts it, through bin/hob.mjs with the node flags of its first
 * line; `hobDist` runs that other build of hob instead (bench/vs-floor.ts's `BENCH_HOB_BASE`):
 * a checkout of hob (a worktree of an earlier commit, built) through its own bin, as hob; or a
 * dist/ folder as `node <the bin's flags> DIR/cli.js`, without the bin, so without its code cache
 * (bin/code-cache.mjs) either: a start then compiles all of dist/ as the first start after a build
 * does, and only a checkout's bin compares starts fairly.
 */
export function spawnSubject(subject: Subject, fakes: ThreeChannels, options: { dir: string; floorBundle: string; people: number; nodeFlags?: string[]; hobDist?: string }): StartedHob {
  const { dir, floorBundle, people, nodeFlags = [], hobDist = HOB_DIST } = options;
  if (subject === 'hob') {
    // Only hob itself goes through the bin: `BENCH_HOB_BASE=dist` is the same build without the bin's staleness check.
    const throughBin = options.hobDist === undefined && HOB_DIST === 'dist';
    // Another build gets the bin's node flags too (every build since 5ca95fc starts with them), so
    // the two differ only in their code and in the bin's own check for a stale dist/.
    const otherBin = join(hobDist, 'bin', 'hob.mjs');
    const launch = throughBin
      ? binLaunch(nodeFlags)
      : existsSync(otherBin)
        ? [...binNodeFlags(otherBin), ...nodeFlags, otherBin]
        : [...binNodeFlags(), ...nodeFlags, join(hobDist, 'cli.js')];
    return spawnNode([...launch, '--config', fakes.writeHobConfig(dir, people), 'start'], RUNNING_LINE);
  }
  const settings: FloorSettings = {
    historyFile: join(dir, 'history.json'),
    model: { baseUrl: fakes.model.baseUrl, apiKey: 'test', name: 'claude-bench' },
    telegram: { token: fakes.telegram.token, apiRoot: fakes.telegram.apiRoot },
    slack: { botToken: fakes.slack.botToken, appToken: fakes.slack.appToken, apiUrl: fakes.slack.apiUrl },
    discord: { token: fakes.discord.token, apiUrl: fakes.discord.apiRoot },
  };
  const path = join(dir, 'floor.json');
  writeFileSync(path, JSON.stringify(settings));
  return spawnNode([...nodeFlags, floorBundle, path], FLOOR_RUNNING_LINE);
}

/** A subject started cold against fakes of its own, all three channels up and its running line printed. */
export type LiveSubject = {
  fakes: ThreeChannels;
  started: StartedHob;
  dir: string;
  pid: number | undefined;
  /** Spawn → each channel up. */
  readyMs: Record<Platform, number>;
  /** CPU time (user + system, from /proc) from the spawn until all three channels were up. */
  cpuReadyMs: number;
  /** Resident memory once its running line is printed. */
  rssReady: number;
};

/**
 * Starts the subject cold against fresh fakes (its files in a new temporary dir named after
 * `name`) and waits until it is up. `prepare` sees the fakes and the spawn's time before the
 * spawn. The caller stops it (`stopLive`).
 */
export async function startLive(
  subject: Subject,
  options: { name: string; floorBundle: string; people: number; hobDist?: string; prepare?: (fakes: ThreeChannels, spawnedAt: () => number) => void },
): Promise<LiveSubject> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir(`hob-bench-floor-${options.name}-`);
  let spawnedAt = Number.NaN;
  options.prepare?.(fakes, () => spawnedAt);
  const started = spawnSubject(subject, fakes, { dir, floorBundle: options.floorBundle, people: options.people, ...(options.hobDist ? { hobDist: options.hobDist } : {}) });
  spawnedAt = started.startedAt;
  const pid = started.child.pid;
  const live: LiveSubject = { fakes, started, dir, pid, readyMs: { telegram: Number.NaN, slack: Number.NaN, discord: Number.NaN }, cpuReadyMs: Number.NaN, rssReady: Number.NaN };
  try {
    await fakes.allReady(started.failed);
    live.cpuReadyMs = cpuMs(pid) ?? Number.NaN;
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, `the running line (stderr: ${started.stderr()})`);
    live.readyMs = Object.fromEntries(PLATFORMS.map((platform) => [platform, (fakes.readyAt[platform] as number) - started.startedAt])) as Record<Platform, number>;
    live.rssReady = residentBytes(pid) ?? Number.NaN;
    return live;
  } catch (error) {
    await stopLive(live);
    throw error;
  }
}

export async function stopLive(live: LiveSubject): Promise<void> {
  await live.started.stop();
  await live.fakes.close();
  rmSync(live.dir, { recursive: true, force: true });
}

/**
 * Resolves true once these processes are quiet (each one's work on the previous message done:
 * what it does after an answer is sent lands on no one's next reply), or false after `maxMs`
 * whatever they do. Quiet: every thread asleep (not running, not in the disk's wait) in two
 * looks a millisecond apart, and no thread given any CPU between them. One look alone was
 * fooled by work that goes on in short steps: the floor rewrites its history file after each
 * answer, a write chained behind the other, and after a burst of 20 that tail (8–12 ms of CPU)
 * went on during the next contender's burst in 4 of 15 bursts of a full run.
 */
export async function quiet(pids: readonly (number | undefined)[], maxMs: number): Promise<boolean> {
  const deadline = performance.now() + maxMs;
  let before: (number | undefined)[] | undefined;
  for (;;) {
    const now = pids.map(asleepCpuNs);
    if (before && now.every((ns, at) => ns !== undefined && ns === before?.[at])) return true;
    before = now;
    if (performance.now() > deadline) return false;
    await sleep(1);
  }
}

/**
 * The CPU time of all the process's threads so far, in nanoseconds (the scheduler's own count,
 * /proc/PID/task/TID/schedstat), when every one of them is asleep (not running, not in the
 * disk's wait: /proc/PID/task/TID/stat); undefined while one is not; 0 when the process is gone
 * (Linux). One walk over its threads for both.
 */
function asleepCpuNs(pid: number | undefined): number | undefined {
  if (pid === undefined) return 0;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const state = stat[stat.lastIndexOf(')') + 2];
      if (state === 'R' || state === 'D') return undefined;
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns;
}
