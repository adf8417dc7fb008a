/**
 * hob against the floor, as people run it: one `hob start` serving Telegram, Slack and Discord
 * at once against the loopback fakes with an instant stand-in model (the fake Anthropic
 * server), and — in the same sitting, alternately — a bare echo bot on the same libraries
 * (bench/floor-bot/, bundled like hob's dist/). Each sitting starts both cold, one after the
 * other (each against fakes of its own; which goes first alternates between sittings), waits
 * for all three channels of each, then sends each of them 690 DMs, message by message in turn
 * (hob's, the floor's, hob's, …, each sent once both processes are quiet), so both see the
 * same moments of the machine: 90 one at a time (round robin over the platforms and 10 people
 * each), a burst of 20 people on Telegram at once, and 580 more one at a time; then four more
 * bursts of 20 people new to it, so the burst's figure is the median of five (one burst alone
 * moved by half between sittings). Printed for both and as hob / floor: reply median per
 * platform, CPU per message (each process's own /proc counters over the same window), RSS after
 * 90 and after 690 messages (both before the four later bursts), cold start to each channel
 * (and the CPU spent until all three are up), the burst (and its CPU on the main thread, where
 * it queues: steadier under load than its wall time), and platform calls per answer; and the
 * ratio within each sitting (its spread shows how far the machine's drift still reaches the
 * figure). Each sitting also starts each subject cold once more, one after the other, and
 * writes a message on each channel the moment it is up: the time from the spawn to its answer
 * shows what a person writing at once waits (hob holds what arrives while it builds the rest
 * of itself, so its channels being up is not the whole start).
 *
 * `BENCH_SITTINGS=N` sets the number of sittings (3); `BENCH_FLOOR_PART=start` measures only
 * the cold starts (ready and first answers, no messages after); `BENCH_FLOOR_PART=burst` only
 * the bursts (after the first 90 messages, none of the 580 between, no second cold start:
 * a quick look at a change to a new person's first message, `BENCH_BURSTS` of them, 5 by
 * default); `BENCH_HOB_DIST=DIR` runs
 * another build of hob than dist/ (bench/subjects.ts); `BENCH_HOB_BASE=DIR` also runs that
 * build of hob ("base": a built checkout, e.g. `git worktree add /tmp/base HEAD` with its
 * `npm run build`, started through its own bin and code cache) in the same sittings, interleaved with the other two, and prints it
 * beside them (hob / base too): a change measured against the build before it.
 * Soak: `BENCH_SOAK=5000 node --import tsx bench/vs-floor.ts` sends that many DMs one at a
 * time to each (hob's, the floor's, and the base build's with `BENCH_HOB_BASE`, in turn, as in
 * a sitting) and prints RSS every 500, so a steady climb shows.
 */
import { rmSync } from 'node:fs';
import { tempDir } from '../test/support/engine.js';
import { cpuMs, mainThreadCpuMs, residentBytes } from './hob-process.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';
import { bundleFloor, quiet, startLive as startSubject, stopLive, type LiveSubject } from './subjects.js';
import { PLATFORMS, ThreeChannels, type Platform } from './three-channels.js';

/** Sittings (`BENCH_SITTINGS` overrides). */
const SITTINGS = Number(process.env.BENCH_SITTINGS ?? 3);
/** `start`: the cold starts only. */
const START_ONLY = process.env.BENCH_FLOOR_PART === 'start';
/** `burst`: the first 90 messages and the bursts only. */
const BURST_ONLY = process.env.BENCH_FLOOR_PART === 'burst';
/** Another build of hob measured in the same sittings (`BENCH_HOB_BASE`), or none. */
const HOB_BASE = process.env.BENCH_HOB_BASE;
const PEOPLE = 10;
const BURST = 20;
/** Bursts per sitting, each of BURST people new to the subject: the first after FIRST messages, the rest after all. */
const BURSTS = BURST_ONLY ? Number(process.env.BENCH_BURSTS ?? 5) : 5;
const FIRST = 90;
const REST = BURST_ONLY ? 0 : 580;
const SOAK_STEP = 500;
/** The person who writes on each channel the moment it is up (allowed beside the others). */
const FIRST_WRITER = PEOPLE + BURST * BURSTS;
const MB = 1024 * 1024;
/** How long a message waits at most for the processes to go quiet before it is sent anyway. */
const QUIET_WAIT_MS = 200;

/** What a sitting runs: hob, the floor, and the base build when `BENCH_HOB_BASE` names one. */
type Contender = 'hob' | 'floor' | 'base';
const CONTENDERS: readonly Contender[] = HOB_BASE ? ['hob', 'base', 'floor'] : ['hob', 'floor'];

/** One sitting's figures for one contender. */
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
  /** Each burst's CPU on the main thread, in order. */
  burstCpus: number[];
  callsPerAnswer: Record<Platform, number>;
};
type Messages = Omit<Sitting, 'readyMs' | 'cpuReadyMs' | 'rssReady' | 'firstAnswerMs' | 'cpuFirstAnswersMs'>;

/** A contender started cold against fakes of its own, up. */
type Live = LiveSubject & { contender: Contender };

/** Starts the contender cold and waits until all three channels are up and it says it is running. */
async function startLive(contender: Contender, floorBundle: string, prepare?: (fakes: ThreeChannels, spawnedAt: () => number) => void): Promise<Live> {
  const live = await startSubject(contender === 'floor' ? 'floor' : 'hob', { name: contender, floorBundle, people: FIRST_WRITER + 1, ...(contender === 'base' && HOB_BASE ? { hobDist: HOB_BASE } : {}), ...(prepare ? { prepare } : {}) });
  return { ...live, contender };
}

/** Steps sent before the processes were quiet (printed with each sitting: many means the figures saw a busy machine). */
let notQuiet = 0;

/** The `index`-th message of a sequence sent one at a time: platforms round robin, PEOPLE each. */
async function sendOne(fakes: ThreeChannels, index: number, replies?: Record<Platform, number[]>): Promise<void> {
  const platform = PLATFORMS[index % PLATFORMS.length] as Platform;
  const person = Math.floor(index / PLATFORMS.length) % PEOPLE;
  const ms = await fakes.message(platform, person, `message ${index}`);
  replies?.[platform].push(ms);
}

/**
 * One sitting: the contenders started cold in `order`, one after the other, then their
 * messages interleaved (unless START_ONLY), then a cold start of each to its first answers.
 */
async function sit(order: readonly Contender[], floorBundle: string): Promise<Record<Contender, Sitting>> {
  const lives: Live[] = [];
  const sittings: Partial<Record<Contender, Sitting>> = {};
  try {
    for (const contender of order) lives.push(await startLive(contender, floorBundle));
    const messages = START_ONLY ? lives.map(noMessages) : await interleaved(lives);
    for (const [at, live] of lives.entries()) sittings[live.contender] = { readyMs: live.readyMs, cpuReadyMs: live.cpuReadyMs, rssReady: live.rssReady, ...(messages[at] as Messages), firstAnswerMs: { telegram: Number.NaN, slack: Number.NaN, discord: Number.NaN }, cpuFirstAnswersMs: Number.NaN };
  } finally {
    for (const live of lives) await stopLive(live);
  }
  if (!BURST_ONLY) for (const contender of order) Object.assign(sittings[contender] as Sitting, await firstAnswers(contender, floorBundle));
  return sittings as Record<Contender, Sitting>;
}

/** A cold start only (`BENCH_FLOOR_PART=start`): the message figures stay empty. */
function noMessages(): Messages {
  const none = { telegram: Number.NaN, slack: Number.NaN, discord: Number.NaN };
  return { replies: { telegram: [], slack: [], discord: [] }, cpuPerMessageMs: Number.NaN, rss90: Number.NaN, rss690: Number.NaN, burstMs: Number.NaN, bursts: [], burstCpuMs: Number.NaN, burstCpus: [], callsPerAnswer: none };
}

/** The 690 messages and five bursts, each step given to every contender in turn, each once all are quiet. */
async function interleaved(lives: readonly Live[]): Promise<Messages[]> {
  const pids = lives.map((live) => live.pid);
  const inTurn = async (step: (live: Live, at: number) => Promise<void>): Promise<void> => {
    for (const [at, live] of lives.entries()) {
      if (!(await quiet(pids, QUIET_WAIT_MS))) notQuiet += 1;
      await step(live, at).catch((error: unknown) => {
        throw new Error(`${live.contender}: ${error instanceof Error ? error.message : String(error)}\nits stderr: ${live.started.stderr().slice(-2000)}`);
      });
    }
  };
  const replies = lives.map((): Record<Platform, number[]> => ({ telegram: [], slack: [], discord: [] }));
  const bursts = lives.map((): { ms: number; cpuMs: number }[] => []);
  const cpuBefore = pids.map((pid) => cpuMs(pid) ?? Number.NaN);
  const callsBefore = lives.map((live) => PLATFORMS.map((platform) => live.fakes.calls(platform)));
  for (let index = 0; index < FIRST; index++) await inTurn((live, at) => sendOne(live.fakes, index, replies[at]));
  const rss90 = pids.map((pid) => residentBytes(pid) ?? Number.NaN);
  await inTurn(async (live, at) => void bursts[at]?.push(await burst(live.fakes, 0, live.pid)));
  for (let index = FIRST; index < FIRST + REST; index++) await inTurn((live, at) => sendOne(live.fakes, index, replies[at]));
  const cpuPerMessageMs = pids.map((pid, at) => ((cpuMs(pid) ?? Number.NaN) - (cpuBefore[at] as number)) / (FIRST + BURST + REST));
  // Over all 690: a person's first message on Slack also looks up their name (users.info), once.
  const callsPerAnswer = lives.map((live, at) => {
    const answers = (platform: Platform) => (replies[at] as Record<Platform, number[]>)[platform].length + (platform === 'telegram' ? BURST : 0);
    return Object.fromEntries(PLATFORMS.map((platform, which) => [platform, (live.fakes.calls(platform) - (callsBefore[at]?.[which] as number)) / answers(platform)])) as Record<Platform, number>;
  });
  const rss690 = pids.map((pid) => residentBytes(pid) ?? Number.NaN);
  for (let later = 1; later < BURSTS; later++) await inTurn(async (live, at) => void bursts[at]?.push(await burst(live.fakes, later, live.pid)));
  return lives.map((_, at) => {
    const each = bursts[at] as { ms: number; cpuMs: number }[];
    return { replies: replies[at] as Record<Platform, number[]>, cpuPerMessageMs: cpuPerMessageMs[at] as number, rss90: rss90[at] as number, rss690: rss690[at] as number, burstMs: median(each.map((one) => one.ms)), bursts: each.map((one) => one.ms), burstCpuMs: median(each.map((one) => one.cpuMs)), burstCpus: each.map((one) => one.cpuMs), callsPerAnswer: callsPerAnswer[at] as Record<Platform, number> };
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
 * A cold start of the contender with a message written on each channel the moment it is up:
 * milliseconds from the spawn to each answer.
 */
async function firstAnswers(contender: Contender, floorBundle: string): Promise<Pick<Sitting, 'firstAnswerMs' | 'cpuFirstAnswersMs'>> {
  const answers: Partial<Record<Platform, Promise<number>>> = {};
  const live = await startLive(contender, floorBundle, (fakes, spawnedAt) => {
    fakes.onReady = (platform) => {
      // After the fake's own part of the handshake (Slack's hello follows the connection).
      const answered = new Promise<void>((resolve) => setImmediate(resolve)).then(() => fakes.message(platform, FIRST_WRITER, 'are you there?'));
      answers[platform] = answered.then(() => performance.now() - spawnedAt());
      answers[platform].catch(() => undefined);
    };
  });
  try {
    const times = await Promise.all(PLATFORMS.map((platform) => answers[platform] as Promise<number>));
    const cpuFirstAnswersMs = cpuMs(live.pid) ?? Number.NaN;
    return { firstAnswerMs: Object.fromEntries(PLATFORMS.map((platform, at) => [platform, times[at] as number])) as Record<Platform, number>, cpuFirstAnswersMs };
  } finally {
    await stopLive(live);
  }
}

/** "12.3 ms (11.0–14.1)": the median over sittings and their spread. */
function figure(values: number[], unit: string, scale = 1): string {
  const scaled = values.map((value) => value / scale);
  return `${fmt(median(scaled))} ${unit} (${fmt(Math.min(...scaled))}–${fmt(Math.max(...scaled))})`;
}

function ratio(of: number[], to: number[]): string {
  return `${(median(of) / median(to)).toFixed(2)}×`;
}

/** "hob 12.3 ms (…), floor 10.1 ms (…) → 1.22×", and the base build's beside them when there is one. */
function compare(name: string, pick: (sitting: Sitting) => number, sittings: Record<Contender, Sitting[]>, unit: string, scale = 1): string {
  const values = (contender: Contender) => sittings[contender].map(pick);
  const base = HOB_BASE ? `; base ${figure(values('base'), unit, scale)} → ${ratio(values('base'), values('floor'))}, hob / base ${ratio(values('hob'), values('base'))}` : '';
  return `${name}: hob ${figure(values('hob'), unit, scale)}, floor ${figure(values('floor'), unit, scale)} → ${ratio(values('hob'), values('floor'))}${base}`;
}

/** "1.05× (0.98–1.12)": hob / floor within each sitting, the median and spread over sittings. */
function withinSittings(name: string, pick: (sitting: Sitting) => number, sittings: Record<Contender, Sitting[]>): string {
  const ratios = (contender: Contender) => sittings[contender].map((sitting, at) => pick(sitting) / pick(sittings.floor[at] as Sitting));
  const spread = (values: number[]) => `${median(values).toFixed(2)}× (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  return `${name}: hob / floor ${spread(ratios('hob'))}${HOB_BASE ? `, base / floor ${spread(ratios('base'))}` : ''}`;
}

/**
 * The soak: the contenders (hob, the floor, and the base build when there is one) started one
 * after the other, then each message sent to each in turn, as a sitting's messages are, so
 * all see the same moments of the machine; RSS every SOAK_STEP messages.
 */
async function soak(messages: number, floorBundle: string): Promise<string[]> {
  const lives: Live[] = [];
  try {
    for (const contender of CONTENDERS) lives.push(await startLive(contender, floorBundle));
    const samples = lives.map((live) => [`0: ${fmt((residentBytes(live.pid) ?? Number.NaN) / MB)}`]);
    for (let index = 0; index < messages; index++) {
      for (const live of lives) await sendOne(live.fakes, index);
      if ((index + 1) % SOAK_STEP !== 0) continue;
      const rss = lives.map((live) => fmt((residentBytes(live.pid) ?? Number.NaN) / MB));
      rss.forEach((mb, at) => samples[at]?.push(`${index + 1}: ${mb}`));
      // As it goes: a soak takes a while, and what it has seen so far is worth seeing.
      console.log(`soak, after ${index + 1}: RSS ${lives.map((live, at) => `${live.contender} ${rss[at]}`).join(', ')} MB`);
    }
    const lines = lives.map((live, at) => `soak, ${live.contender}: RSS in MB after N messages (one at a time, ${PEOPLE * PLATFORMS.length} people) — ${(samples[at] as string[]).join(', ')}`);
    for (const line of lines) console.log(line);
    return lines;
  } finally {
    for (const live of lives) await stopLive(live);
  }
}

/** One contender's line for one sitting. */
function sittingLine(round: number, contender: Contender, sitting: Sitting): string {
  const messages = START_ONLY ? '' : `replies ${PLATFORMS.map((platform) => `${platform} ${fmt(median(sitting.replies[platform]))} ms`).join(', ')}; CPU ${fmt(sitting.cpuPerMessageMs)} ms/message; RSS ${fmt(sitting.rss90 / MB)} → ${fmt(sitting.rss690 / MB)} MB; bursts ${sitting.bursts.map(fmt).join(' / ')} ms (main thread ${sitting.burstCpus.map(fmt).join(' / ')} ms CPU); `;
  return `sitting ${round + 1}, ${contender}: ${messages}ready ${PLATFORMS.map((platform) => fmt(sitting.readyMs[platform])).join(' / ')} ms (CPU ${fmt(sitting.cpuReadyMs)} ms), first answer ${PLATFORMS.map((platform) => fmt(sitting.firstAnswerMs[platform])).join(' / ')} ms (${PLATFORMS.join(' / ')}; CPU ${fmt(sitting.cpuFirstAnswersMs)} ms)`;
}

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-floor-bundle-');
  try {
    const floorBundle = await bundleFloor(dir);
    const soakMessages = Number(process.env.BENCH_SOAK ?? 0);
    if (soakMessages > 0) return { name: 'vs floor (soak)', summary: await soak(soakMessages, floorBundle) };
    const sittings: Record<Contender, Sitting[]> = { hob: [], floor: [], base: [] };
    for (let round = 0; round < SITTINGS; round++) {
      // Alternately: who starts first (and goes first with each message) turns every sitting.
      const order = CONTENDERS.map((_, at) => CONTENDERS[(at + round) % CONTENDERS.length] as Contender);
      notQuiet = 0;
      const sitting = await sit(order, floorBundle);
      if (notQuiet > 0) console.log(`sitting ${round + 1}: ${notQuiet} steps sent before the processes were quiet (${QUIET_WAIT_MS} ms)`);
      for (const contender of order) {
        sittings[contender].push(sitting[contender]);
        console.log(sittingLine(round, contender, sitting[contender]));
      }
    }
    const coldLines = [
      ...PLATFORMS.map((platform) => compare(`  cold start to ${platform} ready`, (sitting) => sitting.readyMs[platform], sittings, 'ms')),
      compare('  CPU from the spawn until all three are up', (sitting) => sitting.cpuReadyMs, sittings, 'ms'),
      ...PLATFORMS.map((platform) => compare(`  cold start to the first answer on ${platform} (written when it came up)`, (sitting) => sitting.firstAnswerMs[platform], sittings, 'ms')),
      compare('  CPU from the spawn until those three first answers are in', (sitting) => sitting.cpuFirstAnswersMs, sittings, 'ms'),
    ];
    const title = `hob vs a bare bot on the same libraries (${SITTINGS} sittings, alternately, messages interleaved; median over sittings (spread) → hob / floor)`;
    if (START_ONLY) {
      for (const line of [title, ...coldLines]) console.log(line);
      return { name: 'vs floor (cold start)', summary: [title, ...coldLines] };
    }
    const burstLines = [
      compare(`  burst of ${BURST} new people (Telegram) all answered, median of ${BURSTS}`, (sitting) => sitting.burstMs, sittings, 'ms'),
      withinSittings(`  burst, median of ${BURSTS}, within each sitting`, (sitting) => sitting.burstMs, sittings),
      compare(`  the first burst alone (after ${FIRST} messages: the figure before the median of ${BURSTS})`, (sitting) => sitting.bursts[0] ?? Number.NaN, sittings, 'ms'),
      compare(`  the burst's CPU on the main thread, median of ${BURSTS}`, (sitting) => sitting.burstCpuMs, sittings, 'ms'),
      withinSittings(`  the burst's CPU on the main thread, within each sitting`, (sitting) => sitting.burstCpuMs, sittings),
    ];
    if (BURST_ONLY) {
      for (const line of [title, ...burstLines]) console.log(line);
      return { name: 'vs floor (bursts)', summary: [title, ...burstLines] };
    }
    const lines = [
      title,
      ...PLATFORMS.map((platform) => compare(`  reply median, ${platform}`, (sitting) => median(sitting.replies[platform]), sittings, 'ms')),
      ...PLATFORMS.map((platform) => withinSittings(`  reply median within each sitting, ${platform}`, (sitting) => median(sitting.replies[platform]), sittings)),
      compare('  CPU per message', (sitting) => sitting.cpuPerMessageMs, sittings, 'ms'),
      withinSittings('  CPU per message within each sitting', (sitting) => sitting.cpuPerMessageMs, sittings),
      compare('  RSS when all three are up', (sitting) => sitting.rssReady, sittings, 'MB', MB),
      compare(`  RSS after ${FIRST} messages`, (sitting) => sitting.rss90, sittings, 'MB', MB),
      compare(`  RSS after ${FIRST + BURST + REST} messages`, (sitting) => sitting.rss690, sittings, 'MB', MB),
      ...coldLines,
      ...burstLines,
      ...PLATFORMS.map((platform) => compare(`  platform calls per answer, ${platform}`, (sitting) => sitting.callsPerAnswer[platform], sittings, '')),
    ];
    for (const line of lines) console.log(line);
    return { name: 'vs floor', summary: lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
