/**
 * How long `hob start` takes from spawn until hob is ready on Telegram: spawn → the loopback
 * fake Telegram Bot API receiving hob's first `getUpdates` long poll (what OpenClaw takes
 * 10.5–11 s for; the bar in DESIGN.md is under half a second). Also when hob printed
 * "hob is running on" to stderr, and its resident memory once it polls (Linux only).
 *
 * Each run gets a fresh data dir and a fresh fake Telegram, so every start is a first start
 * (SQLite file created, migrations applied). The model is the fake Anthropic server; hob
 * does not call it while starting. Then the same as a person's shell runs `hob start`: through
 * bin/hob.mjs with its first line's node flags, loading dist/ through its code cache (one
 * untimed start first writes the caches).
 */
import { firstPoll, residentBytes, RUNNING_LINE, spawnHobStart, spawnNode, withStartFakes, writeStartConfig, type StartedHob } from './hob-process.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';
import { binLaunch } from './subjects.js';

const RUNS = 9;
const RUNNING_WAIT_MS = 1_000;

type Sample = {
  /** Spawn → first getUpdates request at the fake. */
  pollMs: number;
  /** Spawn → "hob is running on" on stderr, if printed by the time of the first poll or shortly after. */
  runningMs: number | undefined;
  /** VmRSS of the child just after its first poll, in bytes; undefined off Linux. */
  rssBytes: number | undefined;
};

/** `node dist/cli.js start`, or (`bin`) the bin with its flags. */
function spawnStart(config: string, through: 'dist' | 'bin'): StartedHob {
  return through === 'bin' ? spawnNode([...binLaunch(), '--config', config, 'start'], RUNNING_LINE) : spawnHobStart(config);
}

function timeStart(through: 'dist' | 'bin'): Promise<Sample> {
  return withStartFakes('hob-bench-poll-', async (fakes) => {
    const hob = spawnStart(writeStartConfig(fakes), through);
    try {
      await firstPoll(hob, fakes.telegram);
      const pollMs = performance.now() - hob.startedAt;
      const rssBytes = residentBytes(hob.child.pid);
      // The line is written right after the gateway starts; give it a moment if the poll came first.
      if (hob.runningMs() === undefined) await fakes.telegram.waitFor(() => hob.runningMs() !== undefined, RUNNING_WAIT_MS, 'the running line').catch(() => undefined);
      return { pollMs, runningMs: hob.runningMs(), rssBytes };
    } finally {
      const code = await hob.stop();
      if (code !== 0) process.stderr.write(`warning: hob start exited ${code} after SIGTERM\nstderr: ${hob.stderr()}\n`);
    }
  });
}

/** The figures' line for `samples`. */
function summary(samples: Sample[]): string {
  const polls = samples.map((sample) => sample.pollMs);
  const running = samples.flatMap((sample) => (sample.runningMs === undefined ? [] : [sample.runningMs]));
  const rss = samples.flatMap((sample) => (sample.rssBytes === undefined ? [] : [sample.rssBytes]));

  const pollPart = `median ${fmt(median(polls))} ms, max ${fmt(Math.max(...polls))} ms (${RUNS} runs)`;
  const runningPart = running.length ? `; "hob is running" printed at ${fmt(median(running))} ms median` : '';
  const rssPart = rss.length ? `; RSS when ready ${fmt(median(rss) / 1024 / 1024)} MB` : '';
  return `${pollPart}${runningPart}${rssPart}`;
}

export async function run(): Promise<BenchResult> {
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await timeStart('dist'));
  const line = `hob start → first Telegram poll: ${summary(samples)}`;
  console.log(line);

  await timeStart('bin');
  const throughBin: Sample[] = [];
  for (let i = 0; i < RUNS; i++) throughBin.push(await timeStart('bin'));
  const binLine = `hob start → first Telegram poll through the bin (code cache): ${summary(throughBin)}`;
  console.log(binLine);

  return {
    name: 'start to poll',
    summary: [`${line} (OpenClaw: 10.5–11 s; target under 500 ms)`, binLine],
  };
}

runIfMain(import.meta.url, run);
