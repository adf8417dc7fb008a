/**
 * hob against the floor, as people run it: one `hob start` serving Telegram, Slack and Discord
 * at once against the loopback fakes with an instant stand-in model (the fake Anthropic
 * server), and — in the same sitting, alternately — a bare echo bot on the same libraries
 * (bench/floor-bot/, bundled like hob's dist/). Each sitting starts the process cold, waits
 * for all three channels, then sends 690 DMs: 90 one at a time (round robin over the
 * platforms and 10 people each), a burst of 20 people on Telegram at once, and 580 more one
 * at a time; then four more bursts of 20 people new to it, so the burst's figure is the
 * median of five (one burst alone moved by half between sittings). Printed for both and as
 * hob / floor: reply median per platform, CPU per message, RSS after 90 and after 690
 * messages (both before the four later bursts), cold start to each channel (and the CPU spent
 * until all three are up), the burst (and its CPU on the main thread, where it queues: steadier
 * under load than its wall time), and platform calls per answer. Each sitting also starts each
 * subject cold once more and writes
 * a message on each channel the moment it is up: the time from the spawn to its answer shows
 * what a person writing at once waits (hob holds what arrives while it builds the rest of
 * itself, so its channels being up is not the whole start).
 *
 * `BENCH_SITTINGS=N` sets the number of sittings per subject (3); `BENCH_FLOOR_PART=start`
 * measures only the cold starts (ready and first answers, no messages after); `BENCH_HOB_DIST=DIR` runs
 * another build of hob than dist/ (bench/subjects.ts).
 * Soak: `BENCH_SOAK=5000 node --import tsx bench/vs-floor.ts` sends that many DMs one at a
 * time to each (hob first, then the floor) and prints RSS every 500, so a steady climb shows.
 */
import { rmSync } from 'node:fs';
import { tempDir } from '../test/support/engine.js';
import { cpuMs, mainThreadCpuMs, residentBytes, type StartedHob } from './hob-process.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';
import { bundleFloor, spawnSubject, type Subject } from './subjects.js';
import { PLATFORMS, ThreeChannels, type Platform } from './three-channels.js';

/** Sittings per subject (`BENCH_SITTINGS` overrides). */
const SITTINGS = Number(process.env.BENCH_SITTINGS ?? 3);
/** `start`: the cold starts only. */
const START_ONLY = process.env.BENCH_FLOOR_PART === 'start';
const PEOPLE = 10;
const BURST = 20;
/** Bursts per sitting, each of BURST people new to the subject: the first after FIRST messages, the rest after all. */
const BURSTS = 5;
const FIRST = 90;
const REST = 580;
const SOAK_STEP = 500;
/** The person who writes on each channel the moment it is up (allowed beside the others). */
const FIRST_WRITER = PEOPLE + BURST * BURSTS;
const MB = 1024 * 1024;

/** One cold start and 690 messages of one subject. */
type Sitting = {
  readyMs: Record<Platform, number>;
  /** CPU time (user + system, from /proc) from the spawn until all three channels were up: steadier under load than the wall times. */
  cpuReadyMs: number;
  /** From the spawn to the answer of a message written the moment the channel was up (a cold start of its own). */
  firstAnswerMs: Record<Platform, number>;
  /** CPU time (user + system, from /proc) from that spawn until all three first answers were in. */
  cpuFirstAnswersMs: number;
  replies: Record<Platform, number[]>;
  cpuPerMessageMs: number;
  rssReady: number;
  rss90: number;
  rss690: number;
  /** The median of the sitting's bursts. */
  burstMs: number;
  /** Each burst's time, in order. */
  bursts: number[];
  /** The median of the bursts' CPU time on the subject's main thread (steadier under load than the wall time). */
  burstCpuMs: number;
  callsPerAnswer: Record<Platform, number>;
};

/**
 * Starts the subject cold against fresh fakes, hands it to `use`, and stops everything after.
 * `prepare` sees the fakes and the spawn's time before the spawn.
 */
async function withSubject<T>(
  subject: Subject,
  floorBundle: string,
  use: (fakes: ThreeChannels, process: StartedHob, cpuReadyMs: number) => Promise<T>,
  prepare?: (fakes: ThreeChannels, spawnedAt: () => number) => void,
): Promise<T> {
  const fakes = await ThreeChannels.start();
  const dir = tempDir(`hob-bench-floor-${subject}-`);
  let spawnedAt = Number.NaN;
  prepare?.(fakes, () => spawnedAt);
  const started = spawnSubject(subject, fakes, { dir, floorBundle, people: FIRST_WRITER + 1 });
  spawnedAt = started.startedAt;
  try {
    await fakes.allReady(started.failed);
    const cpuReadyMs = cpuMs(started.child.pid) ?? Number.NaN;
    await fakes.discord.waitFor(() => started.runningMs() !== undefined, 30_000, `the running line (stderr: ${started.stderr()})`);
    return await use(fakes, started, cpuReadyMs);
  } finally {
    await started.stop();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The `index`-th message of a sequence sent one at a time: platforms round robin, PEOPLE each. */
async function sendOne(fakes: ThreeChannels, index: number, replies?: Record<Platform, number[]>): Promise<void> {
  const platform = PLATFORMS[index % PLATFORMS.length] as Platform;
  const person = Math.floor(index / PLATFORMS.length) % PEOPLE;
  const ms = await fakes.message(platform, person, `message ${index}`);
  replies?.[platform].push(ms);
}

async function sit(subject: Subject, floorBundle: string): Promise<Sitting> {
  const sitting = START_ONLY ? await coldStart(subject, floorBundle) : await sitWithoutFirstAnswers(subject, floorBundle);
  return { ...sitting, ...(await firstAnswers(subject, floorBundle)) };
}

/** A cold start to all three up, and nothing after (`BENCH_FLOOR_PART=start`): the other figures stay empty. */
function coldStart(subject: Subject, floorBundle: string): Promise<Omit<Sitting, 'firstAnswerMs' | 'cpuFirstAnswersMs'>> {
  return withSubject(subject, floorBundle, async (fakes, started, cpuReadyMs) => {
    const none = { telegram: Number.NaN, slack: Number.NaN, discord: Number.NaN };
    return { readyMs: readyMsOf(fakes, started), cpuReadyMs, replies: { telegram: [], slack: [], discord: [] }, cpuPerMessageMs: Number.NaN, rssReady: residentBytes(started.child.pid) ?? Number.NaN, rss90: Number.NaN, rss690: Number.NaN, burstMs: Number.NaN, bursts: [], burstCpuMs: Number.NaN, callsPerAnswer: none };
  });
}

function readyMsOf(fakes: ThreeChannels, started: StartedHob): Record<Platform, number> {
  return Object.fromEntries(PLATFORMS.map((platform) => [platform, (fakes.readyAt[platform] as number) - started.startedAt])) as Record<Platform, number>;
}

function sitWithoutFirstAnswers(subject: Subject, floorBundle: string): Promise<Omit<Sitting, 'firstAnswerMs' | 'cpuFirstAnswersMs'>> {
  return withSubject(subject, floorBundle, async (fakes, started, cpuReadyMs) => {
    const pid = started.child.pid;
    const readyMs = readyMsOf(fakes, started);
    const rssReady = residentBytes(pid) ?? Number.NaN;
    const replies: Record<Platform, number[]> = { telegram: [], slack: [], discord: [] };
    const cpuBefore = cpuMs(pid) ?? Number.NaN;
    const callsBefore = PLATFORMS.map((platform) => fakes.calls(platform));
    for (let index = 0; index < FIRST; index++) await sendOne(fakes, index, replies);
    const rss90 = residentBytes(pid) ?? Number.NaN;
    const bursts = [await burst(fakes, 0, pid)];
    for (let index = FIRST; index < FIRST + REST; index++) await sendOne(fakes, index, replies);
    const cpuPerMessageMs = ((cpuMs(pid) ?? Number.NaN) - cpuBefore) / (FIRST + BURST + REST);
    // Over all 690: a person's first message on Slack also looks up their name (users.info), once.
    const answers = (platform: Platform) => replies[platform].length + (platform === 'telegram' ? BURST : 0);
    const callsPerAnswer = Object.fromEntries(PLATFORMS.map((platform, at) => [platform, (fakes.calls(platform) - (callsBefore[at] as number)) / answers(platform)])) as Record<Platform, number>;
    const rss690 = residentBytes(pid) ?? Number.NaN;
    for (let at = 1; at < BURSTS; at++) bursts.push(await burst(fakes, at, pid));
    const burstMs = median(bursts.map((each) => each.ms));
    return { readyMs, cpuReadyMs, replies, cpuPerMessageMs, rssReady, rss90, rss690, burstMs, bursts: bursts.map((each) => each.ms), burstCpuMs: median(bursts.map((each) => each.cpuMs)), callsPerAnswer };
  });
}

/** The `at`-th burst: BURST people new to the subject write on Telegram at once; milliseconds until all are answered, and the main thread's CPU meanwhile. */
async function burst(fakes: ThreeChannels, at: number, pid: number | undefined): Promise<{ ms: number; cpuMs: number }> {
  const cpuBefore = mainThreadCpuMs(pid) ?? Number.NaN;
  const started = performance.now();
  await Promise.all(Array.from({ length: BURST }, (_, index) => fakes.message('telegram', PEOPLE + at * BURST + index, 'all at once')));
  return { ms: performance.now() - started, cpuMs: (mainThreadCpuMs(pid) ?? Number.NaN) - cpuBefore };
}

/**
 * A cold start of the subject with a message written on each channel the moment it is up:
 * milliseconds from the spawn to each answer.
 */
async function firstAnswers(subject: Subject, floorBundle: string): Promise<Pick<Sitting, 'firstAnswerMs' | 'cpuFirstAnswersMs'>> {
  const answers: Partial<Record<Platform, Promise<number>>> = {};
  return withSubject(
    subject,
    floorBundle,
    async (_fakes, started) => {
      const times = await Promise.all(PLATFORMS.map((platform) => answers[platform] as Promise<number>));
      const cpuFirstAnswersMs = cpuMs(started.child.pid) ?? Number.NaN;
      return { firstAnswerMs: Object.fromEntries(PLATFORMS.map((platform, at) => [platform, times[at] as number])) as Record<Platform, number>, cpuFirstAnswersMs };
    },
    (fakes, spawnedAt) => {
      fakes.onReady = (platform) => {
        // After the fake's own part of the handshake (Slack's hello follows the connection).
        const answered = new Promise<void>((resolve) => setImmediate(resolve)).then(() => fakes.message(platform, FIRST_WRITER, 'are you there?'));
        answers[platform] = answered.then(() => performance.now() - spawnedAt());
        answers[platform].catch(() => undefined);
      };
    },
  );
}

/** "12.3 ms (11.0–14.1)": the median over sittings and their spread. */
function figure(values: number[], unit: string, scale = 1): string {
  const scaled = values.map((value) => value / scale);
  return `${fmt(median(scaled))} ${unit} (${fmt(Math.min(...scaled))}–${fmt(Math.max(...scaled))})`;
}

function ratio(hob: number[], floor: number[]): string {
  return `${(median(hob) / median(floor)).toFixed(2)}×`;
}

function compare(name: string, pick: (sitting: Sitting) => number, sittings: Record<Subject, Sitting[]>, unit: string, scale = 1): string {
  const hob = sittings.hob.map(pick);
  const floor = sittings.floor.map(pick);
  return `${name}: hob ${figure(hob, unit, scale)}, floor ${figure(floor, unit, scale)} → ${ratio(hob, floor)}`;
}

async function soak(messages: number, floorBundle: string): Promise<string[]> {
  const lines: string[] = [];
  for (const subject of ['hob', 'floor'] as const) {
    await withSubject(subject, floorBundle, async (fakes, started) => {
      const samples: string[] = [`0: ${fmt((residentBytes(started.child.pid) ?? Number.NaN) / MB)}`];
      for (let index = 0; index < messages; index++) {
        await sendOne(fakes, index);
        if ((index + 1) % SOAK_STEP === 0) samples.push(`${index + 1}: ${fmt((residentBytes(started.child.pid) ?? Number.NaN) / MB)}`);
      }
      const line = `soak, ${subject}: RSS in MB after N messages (one at a time, ${PEOPLE * PLATFORMS.length} people) — ${samples.join(', ')}`;
      console.log(line);
      lines.push(line);
    });
  }
  return lines;
}

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-floor-bundle-');
  try {
    const floorBundle = await bundleFloor(dir);
    const soakMessages = Number(process.env.BENCH_SOAK ?? 0);
    if (soakMessages > 0) return { name: 'vs floor (soak)', summary: await soak(soakMessages, floorBundle) };
    const sittings: Record<Subject, Sitting[]> = { hob: [], floor: [] };
    for (let round = 0; round < SITTINGS; round++) {
      // Alternately, and each first every other round, so a busy minute on the machine hits both.
      const order: Subject[] = round % 2 === 0 ? ['hob', 'floor'] : ['floor', 'hob'];
      for (const subject of order) {
        const sitting = await sit(subject, floorBundle);
        sittings[subject].push(sitting);
        const messages = START_ONLY ? '' : `replies ${PLATFORMS.map((platform) => `${platform} ${fmt(median(sitting.replies[platform]))} ms`).join(', ')}; CPU ${fmt(sitting.cpuPerMessageMs)} ms/message; RSS ${fmt(sitting.rss90 / MB)} → ${fmt(sitting.rss690 / MB)} MB; bursts ${sitting.bursts.map(fmt).join(' / ')} ms (main thread ${fmt(sitting.burstCpuMs)} ms CPU); `;
        console.log(`sitting ${round + 1}, ${subject}: ${messages}ready ${PLATFORMS.map((platform) => fmt(sitting.readyMs[platform])).join(' / ')} ms (CPU ${fmt(sitting.cpuReadyMs)} ms), first answer ${PLATFORMS.map((platform) => fmt(sitting.firstAnswerMs[platform])).join(' / ')} ms (${PLATFORMS.join(' / ')}; CPU ${fmt(sitting.cpuFirstAnswersMs)} ms)`);
      }
    }
    const coldLines = [
      ...PLATFORMS.map((platform) => compare(`  cold start to ${platform} ready`, (sitting) => sitting.readyMs[platform], sittings, 'ms')),
      compare('  CPU from the spawn until all three are up', (sitting) => sitting.cpuReadyMs, sittings, 'ms'),
      ...PLATFORMS.map((platform) => compare(`  cold start to the first answer on ${platform} (written when it came up)`, (sitting) => sitting.firstAnswerMs[platform], sittings, 'ms')),
      compare('  CPU from the spawn until those three first answers are in', (sitting) => sitting.cpuFirstAnswersMs, sittings, 'ms'),
    ];
    const title = `hob vs a bare bot on the same libraries (${SITTINGS} sittings each, alternately; median over sittings (spread) → hob / floor)`;
    if (START_ONLY) {
      for (const line of [title, ...coldLines]) console.log(line);
      return { name: 'vs floor (cold start)', summary: [title, ...coldLines] };
    }
    const lines = [
      title,
      ...PLATFORMS.map((platform) => compare(`  reply median, ${platform}`, (sitting) => median(sitting.replies[platform]), sittings, 'ms')),
      compare('  CPU per message', (sitting) => sitting.cpuPerMessageMs, sittings, 'ms'),
      compare('  RSS when all three are up', (sitting) => sitting.rssReady, sittings, 'MB', MB),
      compare(`  RSS after ${FIRST} messages`, (sitting) => sitting.rss90, sittings, 'MB', MB),
      compare(`  RSS after ${FIRST + BURST + REST} messages`, (sitting) => sitting.rss690, sittings, 'MB', MB),
      ...coldLines,
      compare(`  burst of ${BURST} new people (Telegram) all answered, median of ${BURSTS}`, (sitting) => sitting.burstMs, sittings, 'ms'),
      compare(`  the first burst alone (after ${FIRST} messages: the figure before the median of ${BURSTS})`, (sitting) => sitting.bursts[0] ?? Number.NaN, sittings, 'ms'),
      compare(`  the burst's CPU on the main thread, median of ${BURSTS}`, (sitting) => sitting.burstCpuMs, sittings, 'ms'),
      ...PLATFORMS.map((platform) => compare(`  platform calls per answer, ${platform}`, (sitting) => sitting.callsPerAnswer[platform], sittings, '')),
    ];
    for (const line of lines) console.log(line);
    return { name: 'vs floor', summary: lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
