/**
 * Where `hob start`'s CPU and memory per message go, serving Telegram, Slack and Discord at
 * once against the fakes (as bench/vs-floor.ts runs it), or the floor's (`floor`: the bare
 * bot on the same libraries), for comparison. `start` profiles the CPU from the spawn until
 * all three channels are up (`--cpu-prof`); `first` writes a message on each channel the
 * moment it is up (as bench/vs-floor.ts's first answers) and profiles the CPU from the spawn
 * until all three are answered, with a timeline in slices of `SLICE_MS` (50) of what was busy
 * and when the process waited, and the cost between "all three up" and the last answer on its
 * own (`PROFILE_INTERVAL_US` sets the sampling interval, here and for `cpu` and `burst`). The other modes cover the messages
 * after a warm-up of 90:
 * - `cpu`: a CPU profile (inspector `Profiler`);
 * - `burst`: a CPU profile of 20 new people writing on Telegram at once (as bench/vs-floor.ts's
 *   burst), five times over (`BURSTS`), new people each time: what a person's first message costs;
 * - `alloc`: every allocation sampled, also those collected since (inspector
 *   `HeapProfiler.startSampling`): what makes the garbage that makes the heap grow;
 * - `promoted`: as `alloc`, without what a minor GC collected: what outlived the young
 *   generation (held, or collected later by a major GC), the garbage that grows the old one
 *   (`alloc` and `promoted` profile `burst`'s bursts instead with `PROFILE_ON=burst`);
 * - `heap`: two heap snapshots (`--heapsnapshot-signal`), before and after: what is held
 *   (`PROFILE_HEAP_FROM=up` takes the first when all three are up: `heap 0` shows what the
 *   warm-up's messages add);
 * - `sql`: the SQLite statements, writes and commits per answer, and which, with the time spent in each (bench/sql-count.cjs;
 *   `SQL_COUNT=file` preloads another counter in its place, e.g. one that reads CPU time or the WAL's frames),
 *   then the same per first message of 20 new people at once;
 * - `syscalls`: the system calls per answer, by kind (`strace -c -f` attached after the warm-up;
 *   strace must be installed): the work a CPU profile shows only as native time.
 * `PROFILE_SAVE=file` keeps `cpu`'s, `burst`'s and `first`'s raw profile (Chrome's DevTools opens it).
 * `PROFILE_PERF=file` (`cpu`, `burst`; perf must be installed) also runs `perf record -g` on the subject over the measured
 * messages, JS frames named (`--perf-basic-prof`): C++, SQLite's native code, libc and the kernel by name (`perf report -i file`).
 * The inspector's first sample carries the time from `Profiler.start` to it (V8 logs every compiled function first, the
 * longer the more code is loaded: ~150 ms in hob, ~50 in the floor); it is left out, or it reads as "(program)" per message.
 * `start`, `first`, `cpu`, `alloc` and `promoted` print the cost (per message, or in all for `start`) by source file or package (mapped back
 * through dist/'s source maps), by the nearest hob file or package on the stack (so what
 * node does on their behalf counts as theirs), and by function. A tool for finding costs,
 * not part of `npm run bench`:
 *
 *   node --import tsx bench/profile.ts start|first|cpu|burst|alloc|promoted|heap|sql|syscalls [messages=600] [floor]
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { tempDir } from '../test/support/engine.js';
import { allocationCosts, cpuCosts, summarise, timeline, type CpuProfile, type SamplingNode } from './cpu-profile.js';
import { growthByHolder, heapByConstructor } from './heap-snapshot.js';
import { cpuMs, residentBytes } from './hob-process.js';
import { fmt, fmtBytes } from './stats.js';
import { bundleFloor, spawnSubject, type Subject } from './subjects.js';
import { PLATFORMS, ThreeChannels, type Platform } from './three-channels.js';

const WARMUP = 90;
const PEOPLE = 10;
const BURST = 20;
/** `burst` profiles this many bursts, each of 20 people new to hob (`BURSTS` overrides): one burst holds few samples. */
const BURSTS = Number(process.env.BURSTS ?? 5);
const TOP = Number(process.env.TOP ?? 25);

/** The inspector of the spawned process, for Profiler and HeapProfiler commands. */
async function inspector(stderr: () => string): Promise<(method: string, params?: object) => Promise<Record<string, unknown>>> {
  let url: string | undefined;
  while (!(url = /ws:\/\/\S+/.exec(stderr())?.[0])) await new Promise((resolve) => setTimeout(resolve, 20));
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const pending = new Map<number, (result: Record<string, unknown>) => void>();
  socket.on('message', (raw) => {
    const reply = JSON.parse(String(raw)) as { id?: number; result?: Record<string, unknown> };
    if (reply.id !== undefined) pending.get(reply.id)?.(reply.result ?? {});
  });
  let next = 0;
  return (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
}

async function snapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  // The file appears at once and grows while V8 writes it: wait until its size holds still.
  let file: string | undefined;
  let size = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    file ??= readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) continue;
    const now = statSync(join(dir, file)).size;
    if (now > 0 && now === size) return join(dir, file);
    size = now;
  }
}

async function sendMany(fakes: ThreeChannels, from: number, count: number): Promise<void> {
  for (let index = from; index < from + count; index++) {
    const platform = PLATFORMS[index % PLATFORMS.length] as Platform;
    await fakes.message(platform, Math.floor(index / PLATFORMS.length) % PEOPLE, `message ${index}`);
  }
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  if (mode === 'start') return profileStart(process.argv.includes('floor') ? 'floor' : 'hob');
  if (mode === 'first') return profileFirstAnswers(process.argv.includes('floor') ? 'floor' : 'hob');
  if (mode === 'sql') return countStatements(Number(process.argv[3] ?? 90));
  if (mode === 'syscalls') return countSyscalls(Number(process.argv[3] ?? 90), process.argv.includes('floor') ? 'floor' : 'hob');
  if (mode !== 'cpu' && mode !== 'burst' && mode !== 'alloc' && mode !== 'promoted' && mode !== 'heap') throw new Error('usage: bench/profile.ts start|first|cpu|burst|alloc|promoted|heap|sql|syscalls [messages] [floor]');
  // PROFILE_ON=burst: `alloc` and `promoted` over the bursts of `burst` instead of messages one at a time.
  const bursts = mode === 'burst' || ((mode === 'alloc' || mode === 'promoted') && process.env.PROFILE_ON === 'burst');
  const messages = bursts ? BURST * BURSTS : Number(process.argv[3] ?? 600);
  const subject = process.argv.includes('floor') ? 'floor' : 'hob';
  const fakes = await ThreeChannels.start();
  // BENCH_SNAPSHOT_DIR keeps `heap`'s two snapshots there, to read further (bench/heap-snapshot.ts).
  const dir = process.env.BENCH_SNAPSHOT_DIR ?? tempDir('hob-profile-');
  const nodeFlags = mode === 'heap' ? [`--diagnostic-dir=${dir}`, '--heapsnapshot-signal=SIGUSR2'] : ['--inspect=127.0.0.1:0'];
  // PROFILE_PERF=file: `perf record` of the measured messages too, with JS frames named (--perf-basic-prof): what the JS profiler shows only as "(program)".
  const perfFile = process.env.PROFILE_PERF;
  if (perfFile) nodeFlags.push('--perf-basic-prof', `--logfile=${join(dir, 'v8.log')}`, '--no-logfile-per-isolate');
  const floorBundle = subject === 'floor' ? await bundleFloor(dir) : '';
  const hob = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE + BURST * BURSTS, nodeFlags });
  const pid = hob.child.pid as number;
  const lines: string[] = [];
  try {
    const send = mode === 'heap' ? undefined : await inspector(() => hob.stderr());
    await fakes.allReady(hob.failed);
    const rssReady = residentBytes(pid) ?? Number.NaN;
    // PROFILE_HEAP_FROM=up: `heap`'s first snapshot when all three are up, so `heap 0` shows what the warm-up's 90 messages add.
    const up = mode === 'heap' && process.env.PROFILE_HEAP_FROM === 'up' ? await snapshot(pid, dir) : undefined;
    await sendMany(fakes, 0, WARMUP);
    const rssWarm = residentBytes(pid) ?? Number.NaN;
    const warm = up ?? (mode === 'heap' ? await snapshot(pid, dir) : undefined);
    if (mode === 'cpu' || mode === 'burst') await send?.('Profiler.enable').then(() => send('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL_US ?? 1000) })).then(() => send('Profiler.start'));
    const perf = perfFile ? await perfRecord(pid, perfFile) : undefined;
    if (mode === 'alloc' || mode === 'promoted') await send?.('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: mode === 'alloc' });
    if (bursts) for (let burst = 0; burst < BURSTS; burst++) await Promise.all(Array.from({ length: BURST }, (_, index) => fakes.message('telegram', PEOPLE + burst * BURST + index, 'all at once')));
    else await sendMany(fakes, WARMUP, messages);
    await perf?.();
    // Taken before the second snapshot (writing one costs memory of its own).
    const rssEnd = residentBytes(pid) ?? Number.NaN;
    lines.push(`${subject}, RSS: ${fmtBytes(rssReady)} when up, ${fmtBytes(rssWarm)} after ${WARMUP} messages, ${fmtBytes(rssEnd)} after ${WARMUP + messages}`);
    if (warm) {
      const end = await snapshot(pid, dir);
      lines.push(...heapByConstructor(warm, end, TOP), ...growthByHolder(warm, end, TOP));
    }
    if ((mode === 'cpu' || mode === 'burst') && send) {
      const { profile } = (await send('Profiler.stop')) as { profile: CpuProfile };
      // The first sample's delta is the time from Profiler.start to that sample: V8 logs every compiled function
      // before it samples (longer the more code is loaded), and that lands on "(program)" as if the messages cost it.
      if (profile.timeDeltas.length > 0) profile.timeDeltas[0] = 0;
      if (process.env.PROFILE_SAVE) writeFileSync(process.env.PROFILE_SAVE, JSON.stringify(profile));
      lines.push('CPU (sampled):', ...summarise(cpuCosts(profile), messages, ' ms', fmt));
    }
    if ((mode === 'alloc' || mode === 'promoted') && send) {
      const { profile } = (await send('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
      const what = mode === 'alloc' ? 'allocated (sampled, collected or not)' : 'outlived the young generation (sampled; held, or collected by a major GC)';
      lines.push(`${what}:`, ...summarise(allocationCosts(profile.head), messages, '', fmtBytes));
    }
  } finally {
    await hob.stop();
    await fakes.close();
    if (!process.env.BENCH_SNAPSHOT_DIR) rmSync(dir, { recursive: true, force: true });
  }
  for (const line of lines) console.log(line);
}

/** Starts `perf record -g` on `pid` into `file`; the returned function stops it and waits until the file is written (`perf report -i file`). */
async function perfRecord(pid: number, file: string): Promise<() => Promise<void>> {
  const perf = spawn('perf', ['record', '-F', '4999', '-g', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  perf.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // perf attaches asynchronously; give it a moment before the measured messages start.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return async () => {
    const exited = new Promise((resolve) => perf.once('exit', resolve));
    perf.kill('SIGINT');
    await exited;
    if (!existsSync(file)) throw new Error(`perf record wrote nothing: ${stderr}`);
  };
}

type SqlCounts = { statements: number; writes: number; commits: number; ms: number; bySql: Record<string, number>; msBySql: Record<string, number> };

/** SQLite statements, writes and commits per answer after the warm-up (bench/sql-count.cjs counts them inside hob). */
async function countStatements(messages: number): Promise<void> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir('hob-profile-');
  const hob = spawnSubject('hob', fakes, { dir, floorBundle: '', people: PEOPLE + BURST, nodeFlags: ['--require', process.env.SQL_COUNT ?? join(import.meta.dirname, 'sql-count.cjs')] });
  const pid = hob.child.pid as number;
  const file = join(tmpdir(), `hob-sql-count-${pid}.json`);
  const counts = async (): Promise<SqlCounts> => {
    rmSync(file, { force: true });
    process.kill(pid, 'SIGUSR1');
    while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 20)); // written in one call: let it finish
    return JSON.parse(readFileSync(file, 'utf8')) as SqlCounts;
  };
  try {
    await fakes.allReady(hob.failed);
    await sendMany(fakes, 0, WARMUP);
    const before = await counts();
    await sendMany(fakes, WARMUP, messages);
    const after = await counts();
    printCounts(`per answer over ${messages} messages`, before, after, messages);
    // A person's first message: the burst of bench/vs-floor.ts, 20 new people at once.
    await Promise.all(Array.from({ length: BURST }, (_, index) => fakes.message('telegram', PEOPLE + index, 'all at once')));
    printCounts(`per first message of ${BURST} new people at once`, after, await counts(), BURST);
  } finally {
    await hob.stop();
    await fakes.close();
    rmSync(file, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

function printCounts(title: string, before: SqlCounts, after: SqlCounts, messages: number): void {
  const per = (key: 'statements' | 'writes' | 'commits') => fmt((after[key] - before[key]) / messages);
  const ms = (after.ms - before.ms) / messages;
  console.log(`hob, ${title}: ${per('statements')} SQLite statements, ${per('writes')} of them writes, ${per('commits')} commits; ${fmt(ms)} ms inside SQLite (wall, on the main thread)`);
  const rows = Object.entries(after.bySql).map(([sql, n]) => [sql, (n - (before.bySql[sql] ?? 0)) / messages, ((after.msBySql[sql] ?? 0) - (before.msBySql[sql] ?? 0)) / messages] as const);
  for (const [sql, n, each] of rows.filter(([, n, each]) => n > 0 || each > 0).sort((a, b) => b[2] - a[2])) console.log(`  ${fmt(n).padStart(5)}  ${fmt(each).padStart(6)} ms  ${sql.slice(0, 110)}`);
}

/** System calls per answer after the warm-up, counted by `strace -c -f` attached to the subject (strace must be installed). */
async function countSyscalls(messages: number, subject: Subject): Promise<void> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir('hob-profile-');
  const floorBundle = subject === 'floor' ? await bundleFloor(dir) : '';
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE + BURST });
  const out = join(dir, 'strace.txt');
  try {
    await fakes.allReady(started.failed);
    await sendMany(fakes, 0, WARMUP);
    const strace = spawn('strace', ['-c', '-f', '-o', out, '-p', String(started.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    // Attached once it says so on stderr.
    await new Promise<void>((resolve) => strace.stderr.on('data', (chunk: Buffer) => String(chunk).includes('attached') && resolve()));
    await sendMany(fakes, WARMUP, messages);
    await new Promise((resolve) => strace.once('exit', resolve).kill('SIGINT'));
    const rows = readFileSync(out, 'utf8').split('\n').flatMap((line) => {
      const cells = line.trim().split(/\s+/);
      const calls = Number(cells[3]);
      return cells.length >= 5 && Number.isFinite(calls) && cells[0] !== '------' ? [{ name: cells.at(-1) as string, calls }] : [];
    });
    const total = rows.find((row) => row.name === 'total')?.calls ?? 0;
    console.log(`${subject}, system calls per answer over ${messages} messages: ${fmt(total / messages)}`);
    for (const row of rows.filter((row) => row.name !== 'total').sort((a, b) => b.calls - a.calls).slice(0, TOP)) console.log(`  ${fmt(row.calls / messages).padStart(6)}  ${row.name}`);
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** From the spawn until all three channels are up: where the start-up's CPU goes. */
async function profileStart(subject: Subject): Promise<void> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir('hob-profile-');
  const floorBundle = subject === 'floor' ? await bundleFloor(dir) : '';
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  try {
    await fakes.allReady(started.failed);
    const ready = Object.entries(fakes.readyAt).map(([platform, at]) => `${platform} ${fmt(at - started.startedAt)} ms`);
    const upMs = Math.max(...Object.values(fakes.readyAt)) - started.startedAt;
    // Stopped once it handles SIGTERM itself (a kill before that writes no profile).
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, 'the running line');
    await started.stop();
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no CPU profile was written (stderr: ${started.stderr()})`);
    console.log(`${subject}: up on ${ready.join(', ')} after the spawn`);
    // The profile starts when node does, a little after the spawn: the window is a little long, not short.
    for (const line of summarise(cpuCosts(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, upMs), 1, ' ms', fmt, 'CPU until all three are up (sampled)')) console.log(line);
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

/**
 * As vs-floor's first answers: a message written on each channel the moment it is up, and the
 * CPU from the spawn until all three are answered, with a timeline of where the time went
 * (busy or idle, and on what) between the spawn and the last answer.
 */
async function profileFirstAnswers(subject: Subject): Promise<void> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir('hob-profile-');
  const floorBundle = subject === 'floor' ? await bundleFloor(dir) : '';
  const answeredAt: Partial<Record<Platform, Promise<number>>> = {};
  fakes.onReady = (platform) => {
    answeredAt[platform] = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => fakes.message(platform, PEOPLE, 'are you there?'))
      .then(() => performance.now());
    answeredAt[platform].catch(() => undefined);
  };
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE + 1, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${process.env.PROFILE_INTERVAL_US ?? 1000}`] });
  try {
    await fakes.allReady(started.failed);
    const answered = await Promise.all(PLATFORMS.map((platform) => answeredAt[platform] as Promise<number>));
    const cpuAnswered = cpuMs(started.child.pid);
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, 'the running line');
    await started.stop();
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no CPU profile was written (stderr: ${started.stderr()})`);
    const at = (ms: number) => `${fmt(ms - started.startedAt)} ms`;
    console.log(`${subject}: up on ${PLATFORMS.map((platform) => `${platform} ${at(fakes.readyAt[platform] as number)}`).join(', ')}; answered ${PLATFORMS.map((platform, index) => `${platform} ${at(answered[index] as number)}`).join(', ')} after the spawn; CPU (/proc) ${fmt(cpuAnswered ?? Number.NaN)} ms; running line ${fmt(started.runningMs() ?? Number.NaN)} ms`);
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile & { startTime: number };
    if (process.env.PROFILE_SAVE) writeFileSync(process.env.PROFILE_SAVE, JSON.stringify(profile));
    // The profile's clock is the monotonic one in microseconds, from node's start (well after the spawn under load).
    const monoNowUs = Number(process.hrtime.bigint() / 1000n);
    const inProfile = (perfMs: number) => (monoNowUs - (performance.now() - perfMs) * 1000 - profile.startTime) / 1000;
    const upMs = inProfile(Math.max(...PLATFORMS.map((platform) => fakes.readyAt[platform] as number)));
    const endMs = inProfile(Math.max(...answered));
    console.log(`in the profile's clock: node started ${fmt(-inProfile(started.startedAt))} ms after the spawn; all up at ${fmt(upMs)} ms, all answered at ${fmt(endMs)} ms`);
    for (const line of timeline(profile, endMs)) console.log(line);
    for (const line of summarise(cpuCosts(profile, endMs), 1, ' ms', fmt, 'CPU until all three are answered (sampled)')) console.log(line);
    for (const line of summarise(cpuCosts(profile, endMs, upMs), 1, ' ms', fmt, 'CPU from all three up until all three are answered (sampled)')) console.log(line);
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
