/**
 * Where the resident memory of `hob start` serving Telegram, Slack and Discord goes, beside
 * the floor's (bench/floor-bot/, the bare bot on the same libraries), as bench/vs-floor.ts
 * runs them: when all three are up, after 90 messages one at a time, after a burst of 20 new
 * people, and after `messages` more. Each line splits RSS into V8's heap spaces (committed),
 * what V8 counts outside its heap, and the resident memory of each mapped file and of the
 * anonymous mappings (V8's heap and malloc's arenas), read inside the process by
 * bench/memory-report.cjs. `soak` instead sends `messages` one at a time and prints one
 * short line every 500 (RSS, heap used/committed, old space, external, anonymous mappings,
 * and with BENCH_MEMORY_GC=1 the heap still live after a full collection, and the CPU per
 * message over those 500), so a climb shows what it is made of, and what holding less costs.
 * A tool for finding costs, not part of `npm run bench`:
 *
 *   node --import tsx bench/memory-where.ts [messages=600]
 *   node --import tsx bench/memory-where.ts soak [messages=5000] [hob|floor]
 *
 * `BENCH_HEAPTRACK=PIPE` (soak only) preloads heaptrack's recorder into the subject, writing to
 * PIPE (`mkfifo PIPE; heaptrack_interpret < PIPE | zstd > out.zst &`, then `heaptrack_print
 * out.zst`): where malloc's memory (the `[heap]` mapping) goes, which V8's tools do not see.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../test/support/engine.js';
import { cpuMs, residentBytes } from './hob-process.js';
import { fmt } from './stats.js';
import { bundleFloor, spawnSubject, type Subject } from './subjects.js';
import { PLATFORMS, ThreeChannels, type Platform } from './three-channels.js';

const PEOPLE = 10;
const BURST = 20;
const FIRST = 90;
const MB = 1024 * 1024;

type Report = {
  usage: NodeJS.MemoryUsage;
  /** Heap used after a full collection (BENCH_MEMORY_GC=1). */
  live?: number;
  /** Each space's use after that collection. */
  liveSpaces?: Record<string, number>;
  spaces: Record<string, { used: number; committed: number }>;
  mappings: Record<string, number>;
};

async function report(pid: number): Promise<Report> {
  const file = join(tmpdir(), `hob-memory-${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR1');
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
  const read = JSON.parse(readFileSync(file, 'utf8')) as Report;
  rmSync(file, { force: true });
  return read;
}

function describe(label: string, rss: number, { usage, spaces, mappings }: Report): string[] {
  const mb = (bytes: number) => fmt(bytes / MB);
  const heap = Object.entries(spaces)
    .filter(([, space]) => space.committed > 256 * 1024)
    .map(([name, space]) => `${name.replace(/_space$/, '')} ${mb(space.used)}/${mb(space.committed)}`);
  const mapped = Object.entries(mappings)
    .filter(([, bytes]) => bytes > 512 * 1024)
    .sort((a, b) => b[1] - a[1])
    .map(([name, bytes]) => `${name} ${mb(bytes)}`);
  return [
    `  ${label}: RSS ${mb(rss)} MB; V8 heap used/committed ${mb(usage.heapUsed)}/${mb(usage.heapTotal)}, external ${mb(usage.external)} (array buffers ${mb(usage.arrayBuffers)})`,
    `    heap spaces (used/committed MB): ${heap.join(', ')}`,
    `    resident by mapping (MB): ${mapped.join(', ')}`,
  ];
}

async function sendMany(fakes: ThreeChannels, from: number, count: number): Promise<void> {
  for (let index = from; index < from + count; index++) {
    const platform = PLATFORMS[index % PLATFORMS.length] as Platform;
    await fakes.message(platform, Math.floor(index / PLATFORMS.length) % PEOPLE, `message ${index}`);
  }
}

async function measure(subject: Subject, floorBundle: string, messages: number): Promise<string[]> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir(`hob-memory-${subject}-`);
  const nodeFlags = ['--require', join(import.meta.dirname, 'memory-report.cjs')];
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE + BURST, nodeFlags });
  const pid = started.child.pid as number;
  const lines = [`${subject}:`];
  const at = async (label: string) => lines.push(...describe(label, residentBytes(pid) ?? Number.NaN, await report(pid)));
  try {
    await fakes.allReady(started.failed);
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, 'the running line');
    await at('all three up');
    await sendMany(fakes, 0, FIRST);
    await at(`after ${FIRST} messages`);
    await Promise.all(Array.from({ length: BURST }, (_, index) => fakes.message('telegram', PEOPLE + index, 'all at once')));
    await at(`after a burst of ${BURST} new people`);
    await sendMany(fakes, FIRST, messages);
    await at(`after ${messages} more`);
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

/** One line of the soak: what RSS is made of after `sent` messages. */
function brief(sent: number, rss: number, { usage, spaces, mappings, live, liveSpaces }: Report, cpuPerMessage?: number): string {
  const mb = (bytes: number) => fmt(bytes / MB);
  const old = spaces.old_space;
  const parts = [
    `RSS ${mb(rss)}`,
    `heap ${mb(usage.heapUsed)}/${mb(usage.heapTotal)}`,
    old ? `old ${mb(old.used)}/${mb(old.committed)}` : '',
    `external ${mb(usage.external)}`,
    `anonymous ${mb(mappings['(anonymous)'] ?? 0)}`,
    `[heap] ${mb(mappings['[heap]'] ?? 0)}`,
    live === undefined ? '' : `live ${mb(live)}`,
    liveSpaces ? `(${Object.entries(liveSpaces).filter(([, used]) => used > 256 * 1024).map(([name, used]) => `${name.replace(/_space$/, '')} ${mb(used)}`).join(', ')})` : '',
  ];
  const cpu = cpuPerMessage === undefined ? '' : `; CPU ${fmt(cpuPerMessage)} ms a message over the last 500`;
  return `  ${String(sent).padStart(5)}: ${parts.filter(Boolean).join(', ')} MB${cpu}`;
}

async function soak(subject: Subject, floorBundle: string, messages: number): Promise<void> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir(`hob-memory-${subject}-`);
  const nodeFlags = ['--require', join(import.meta.dirname, 'memory-report.cjs')];
  const heaptrack = process.env.BENCH_HEAPTRACK;
  // Only the subject is preloaded: the environment is read when it is spawned.
  if (heaptrack) Object.assign(process.env, { LD_PRELOAD: '/usr/lib/heaptrack/libheaptrack_preload.so', DUMP_HEAPTRACK_OUTPUT: heaptrack });
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: PEOPLE, nodeFlags });
  if (heaptrack) for (const name of ['LD_PRELOAD', 'DUMP_HEAPTRACK_OUTPUT']) delete process.env[name];
  const pid = started.child.pid as number;
  try {
    await fakes.allReady(started.failed);
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, 'the running line');
    console.log(`${subject}, soak of ${messages} (${PEOPLE * PLATFORMS.length} people, one at a time):`);
    console.log(brief(0, residentBytes(pid) ?? Number.NaN, await report(pid)));
    for (let sent = 0; sent < messages; sent += 500) {
      const count = Math.min(500, messages - sent);
      // Read before the report: its collection (BENCH_MEMORY_GC) is not the messages' CPU.
      const cpuBefore = cpuMs(pid) ?? Number.NaN;
      await sendMany(fakes, sent, count);
      const cpu = ((cpuMs(pid) ?? Number.NaN) - cpuBefore) / count;
      console.log(brief(sent + count, residentBytes(pid) ?? Number.NaN, await report(pid), cpu));
    }
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const soaking = process.argv[2] === 'soak';
const messages = Number(process.argv[soaking ? 3 : 2] ?? (soaking ? 5000 : 600));
const dir = tempDir('hob-memory-bundle-');
try {
  const floorBundle = await bundleFloor(dir);
  if (soaking) await soak(process.argv[4] === 'floor' ? 'floor' : 'hob', floorBundle, messages);
  else for (const subject of ['hob', 'floor'] as const) for (const line of await measure(subject, floorBundle, messages)) console.log(line);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
