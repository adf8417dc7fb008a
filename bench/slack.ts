/**
 * Slack: what hob adds to a reply over Socket Mode with an instant model (the fake Slack
 * sends a DM envelope → the reply's chat.postMessage arrives at the fake: Bolt, the adapter,
 * the gateway, the engine and the web client, over loopback), one message at a time; then
 * `hob start` with Telegram and Slack configured together: spawn → the Slack socket
 * connected, spawn → the first Telegram poll, and resident memory once both are up.
 */
import { rmSync } from 'node:fs';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { dmOf } from '../test/fakes/slack/web-api.js';
import { startTestGateway } from '../test/support/gateway.js';
import { slackAdapter } from '../test/support/slack-testbed.js';
import { firstPoll, residentBytes, spawnHobStart, withStartFakes, writeStartConfig } from './hob-process.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const MESSAGES = 300;
const WARMUP = 20;
const STARTS = 5;

async function replyOverhead(): Promise<string> {
  const fake = await startFakeSlack({ pingIntervalMs: 5_000 });
  const person = fake.person({ id: 'UBENCH', name: 'Bench' });
  const adapter = slackAdapter(fake);
  const hob = await startTestGateway(adapter, new InstantModel(), { tools: [], access: new Map([['slack', { allowFrom: [person.id], allowedGroups: [] }]]) });
  let answered: (() => void) | undefined;
  fake.web.onCall = (call) => {
    if (call.method === 'chat.postMessage' && call.params.channel === dmOf(person.id)) answered?.();
  };
  const samples: number[] = [];
  try {
    for (let i = 0; i < WARMUP + MESSAGES; i++) {
      const reply = new Promise<void>((resolve) => (answered = resolve));
      const started = performance.now();
      await fake.dm(person, `message ${i}`);
      await reply;
      if (i >= WARMUP) samples.push(performance.now() - started);
    }
  } finally {
    await hob.close();
    await fake.close();
    rmSync(hob.dir, { recursive: true, force: true });
  }
  const line = `Slack reply overhead over Socket Mode (instant model, ${MESSAGES} DMs one at a time): median ${fmt(median(samples))} ms, p99 ${fmt(percentile(samples, 0.99))} ms`;
  console.log(line);
  return line;
}

type StartSample = { socketMs: number; pollMs: number; rssBytes: number | undefined };

function timeStart(): Promise<StartSample> {
  return withStartFakes('hob-bench-slack-', async (fakes) => {
    const slack = await startFakeSlack({ pingIntervalMs: 5_000 });
    let connectedAt: number | undefined;
    slack.socket.onConnection = () => (connectedAt ??= performance.now());
    const config = writeStartConfig(fakes, `  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["UBENCH"] }\n`);
    const hob = spawnHobStart(config);
    try {
      await firstPoll(hob, fakes.telegram);
      const pollMs = performance.now() - hob.startedAt;
      await slack.waitFor(() => connectedAt !== undefined, 20_000, `the Slack socket (stderr: ${hob.stderr()})`);
      const socketMs = (connectedAt as number) - hob.startedAt;
      // Both channels up: the gateway prints its line once every adapter started.
      await slack.waitFor(() => hob.runningMs() !== undefined, 20_000, 'hob running');
      return { socketMs, pollMs, rssBytes: residentBytes(hob.child.pid) };
    } finally {
      await hob.stop();
      await slack.close().catch(() => undefined);
    }
  });
}

export async function run(): Promise<BenchResult> {
  const summary = [await replyOverhead()];
  const samples: StartSample[] = [];
  for (let i = 0; i < STARTS; i++) samples.push(await timeStart());
  const rss = samples.flatMap((sample) => (sample.rssBytes === undefined ? [] : [sample.rssBytes]));
  const line =
    `hob start with Telegram + Slack: Slack socket connected at median ${fmt(median(samples.map((sample) => sample.socketMs)))} ms, ` +
    `first Telegram poll at ${fmt(median(samples.map((sample) => sample.pollMs)))} ms (${STARTS} runs)` +
    (rss.length ? `; RSS with both up ${fmt(median(rss) / 1024 / 1024)} MB` : '');
  console.log(line);
  summary.push(line);
  return { name: 'slack', summary };
}

runIfMain(import.meta.url, run);
