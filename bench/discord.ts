/**
 * Discord: what hob adds to a reply there, how fast `hob start` is READY on Discord, and how
 * much memory hob holds with Telegram and Discord configured.
 *
 * - Reply overhead: the real Discord adapter and gateway in this process, an instant model,
 *   the loopback fake Discord. Timed from the fake dispatching MESSAGE_CREATE to it receiving
 *   the answer's POST, one DM after another (20 a second): discord.js parsing the frame, the gateway
 *   (access, inbox, queue, engine, SQLite, outbox) and one REST round trip.
 * - Start to READY: spawn `hob start` → the fake sending READY (the IDENTIFY arrived), and
 *   → "hob is running on" (commands registered, Telegram polling too).
 * - RSS of that process once it is running on both.
 */
import { createDiscordAdapter } from '../adapters/discord/discord-adapter.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { startTestGateway } from '../test/support/gateway.js';
import { residentBytes, spawnHobStart, withStartFakes, writeStartConfig } from './hob-process.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const MESSAGES = 300;
const WARMUP = 20;
const STARTS = 7;
const PACE_MS = 50;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function replyOverhead(): Promise<number[]> {
  const fake = await startFakeDiscord();
  // 20 answers a second in one DM: Discord's 5-per-5-s channel bucket would be what is measured.
  fake.buckets.limit = Number.MAX_SAFE_INTEGER;
  const adapter = createDiscordAdapter({ token: fake.token, apiUrl: fake.apiRoot, logger: quiet });
  const hob = await startTestGateway(adapter, new InstantModel());
  const person = { id: '100', name: 'Ann' };
  const channel = fake.dmChannelOf(person);
  const latencies: number[] = [];
  try {
    for (let index = 0; index < WARMUP + MESSAGES; index++) {
      // Paced under Discord's global 50 requests a second (a reply is two: typing and the
      // message), which @discordjs/rest enforces by queueing: faster, the queue is measured.
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      const before = fake.botMessages(channel).length;
      const started = performance.now();
      fake.dm(person, `message ${index}`);
      await fake.waitFor(() => fake.botMessages(channel).length > before, 10_000, 'the reply');
      if (index >= WARMUP) latencies.push(performance.now() - started);
    }
  } finally {
    await hob.close();
    await fake.close();
  }
  return latencies;
}

type StartSample = { readyMs: number; runningMs: number; rssBytes: number | undefined };

function timeStart(withSlack = false): Promise<StartSample> {
  return withStartFakes('hob-bench-discord-', async (fakes) => {
    const discord = await startFakeDiscord();
    const slack = withSlack ? await startFakeSlack({ pingIntervalMs: 5_000 }) : undefined;
    const slackLine = slack ? `  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["UBENCH"] }\n` : '';
    try {
      const config = writeStartConfig(fakes, `  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: ["100"] }\n${slackLine}`);
      const hob = spawnHobStart(config);
      try {
        await discord.waitFor(() => discord.gateway.identifies().length > 0, 20_000, 'the IDENTIFY');
        const readyMs = performance.now() - hob.startedAt;
        await discord.waitFor(() => hob.runningMs() !== undefined, 20_000, `"hob is running on" (stderr: ${hob.stderr()})`);
        return { readyMs, runningMs: hob.runningMs() as number, rssBytes: residentBytes(hob.child.pid) };
      } finally {
        await hob.stop();
      }
    } finally {
      await discord.close();
      await slack?.close();
    }
  });
}

export async function run(): Promise<BenchResult> {
  const latencies = await replyOverhead();
  const starts: StartSample[] = [];
  for (let index = 0; index < STARTS; index++) starts.push(await timeStart());
  const rss = starts.flatMap((start) => (start.rssBytes === undefined ? [] : [start.rssBytes]));
  const allThree: number[] = [];
  for (let index = 0; index < 3; index++) {
    const sample = await timeStart(true);
    if (sample.rssBytes !== undefined) allThree.push(sample.rssBytes);
  }
  const lines = [
    `Discord reply overhead (MESSAGE_CREATE dispatched → answer POSTed, instant model, loopback): median ${fmt(median(latencies))} ms, p99 ${fmt(percentile(latencies, 0.99))} ms (${MESSAGES} DMs, 20 a second)`,
    `hob start → Discord READY: median ${fmt(median(starts.map((start) => start.readyMs)))} ms; → "hob is running on telegram, discord": median ${fmt(median(starts.map((start) => start.runningMs)))} ms (${STARTS} runs)`,
    ...(rss.length ? [`RSS with Telegram and Discord configured, once running: median ${fmt(median(rss) / 1024 / 1024)} MB`] : []),
    ...(allThree.length ? [`RSS with Telegram, Slack and Discord configured, once running: median ${fmt(median(allThree) / 1024 / 1024)} MB (${allThree.length} runs)`] : []),
  ];
  for (const line of lines) console.log(line);
  return { name: 'discord', summary: lines };
}

runIfMain(import.meta.url, run);
