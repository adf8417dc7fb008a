/**
 * Slack: what hob adds to a reply over Socket Mode with an instant model (the fake Slack
 * sends a DM envelope → the reply's chat.postMessage arrives at the fake: Bolt, the adapter,
 * the gateway, the engine and the web client, over loopback), one message at a time; then
 * `hob start` with Telegram and Slack configured together: spawn → the Slack socket
 * connected, spawn → the first Telegram poll, and resident memory once both are up.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic } from '../test/fakes/anthropic.js';
import { startFakeSlack } from '../test/fakes/slack/index.js';
import { dmOf } from '../test/fakes/slack/web-api.js';
import { startFakeTelegram } from '../test/fakes/telegram/index.js';
import { tempDir } from '../test/support/engine.js';
import { startTestGateway } from '../test/support/gateway.js';
import { cleanEnv, writeConfig } from '../test/support/hob-process.js';
import { slackAdapter } from '../test/support/slack-testbed.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const MESSAGES = 300;
const WARMUP = 20;
const STARTS = 5;
const root = join(import.meta.dirname, '..');

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

function residentBytes(pid: number | undefined): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] !== undefined ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

type StartSample = { socketMs: number; pollMs: number; rssBytes: number | undefined };

async function timeStart(): Promise<StartSample> {
  const dir = tempDir('hob-bench-slack-');
  const model = await startFakeAnthropic({ apiKey: 'test' });
  const telegram = await startFakeTelegram({ botUsername: 'hob_bench_bot' });
  const slack = await startFakeSlack({ pingIntervalMs: 5_000 });
  let connectedAt: number | undefined;
  slack.socket.onConnection = () => (connectedAt ??= performance.now());
  const config = writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-bench, api_key: test, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ["100"] }
  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["UBENCH"] }
`,
  );
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/cli.js', '--config', config, 'start'], { cwd: root, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await telegram.waitForCall('getUpdates', () => true, 20_000);
    const pollMs = performance.now() - started;
    await slack.waitFor(() => connectedAt !== undefined, 20_000, `the Slack socket (stderr: ${stderr})`);
    const socketMs = (connectedAt as number) - started;
    // Both channels up: the gateway prints its line once every adapter started.
    await slack.waitFor(() => stderr.includes('hob is running on'), 20_000, 'hob running');
    return { socketMs, pollMs, rssBytes: residentBytes(child.pid) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await slack.close().catch(() => undefined);
    await telegram.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
