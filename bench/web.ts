/**
 * The web chat: what hob adds to a reply there, and how much memory serving it costs.
 *
 * - Reply overhead: the real web adapter and gateway in this process, an instant model, a page
 *   signed in over real HTTP (test/support/web-client.ts). Timed from the page's POST of a
 *   message to the answer arriving on its event stream, one message after another: the HTTP
 *   round trip, the gateway (access, inbox, queue, engine, SQLite, outbox), the live answer
 *   and the stored answer, and the SSE frames back.
 * - Memory: resident memory once running, of `hob start` with Telegram, and of a stand-in
 *   for `hob start` (bench/web-process.ts, bundled like dist/) with Telegram, and with
 *   Telegram and the web chat. The stand-in's difference is what the web channel costs.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createWebAdapter } from '../adapters/web/web-adapter.js';
import { webConfigSchema } from '../adapters/web/config.js';
import { signInLink } from '../adapters/web/links.js';
import { tempDir } from '../test/support/engine.js';
import { startTestGateway } from '../test/support/gateway.js';
import { cleanEnv } from '../test/support/hob-process.js';
import { WebPageClient } from '../test/support/web-client.js';
import { freePort } from '../test/support/web-testbed.js';
import { firstPoll, residentBytes, spawnHobStart, withStartFakes, writeStartConfig } from './hob-process.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const MESSAGES = 300;
const WARMUP = 20;
const STARTS = 5;
const root = join(import.meta.dirname, '..');
/** Beside dist/, so the stand-in finds adapters/web/page as a build does (and git ignores it). */
const STAND_IN_DIR = join(root, 'dist.web-bench');
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function replyOverhead(): Promise<number[]> {
  const dataDir = tempDir('hob-bench-web-');
  const config = webConfigSchema.parse({ port: await freePort(), allow_from: ['100'] });
  const adapter = createWebAdapter({ config, dataDir, logger: quiet });
  const hob = await startTestGateway(adapter, new InstantModel());
  const page = new WebPageClient(adapter.url);
  const latencies: number[] = [];
  try {
    await page.signIn(signInLink(config, dataDir, '100', 'Ann').url);
    await page.open();
    const answers = () => page.messages.filter((message) => message.from === 'hob' && !message.live).length;
    for (let index = 0; index < WARMUP + MESSAGES; index++) {
      const before = answers();
      const started = performance.now();
      await page.say(`message ${index}`);
      await page.waitFor(() => answers() > before, 'the answer', 10_000);
      if (index >= WARMUP) latencies.push(performance.now() - started);
      // The page keeps what it was sent; drop it so the figures measure hob.
      if (page.messages.length > 100) page.messages = [];
    }
  } finally {
    page.close();
    await hob.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return latencies;
}

/** The stand-in, bundled by scripts/build.mjs as dist/ is. */
async function bundleStandIn(): Promise<string> {
  const child = spawn(process.execPath, ['scripts/build.mjs', 'bench/web-process.ts', STAND_IN_DIR], { cwd: root, stdio: 'inherit' });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bundling bench/web-process.ts failed (exit ${code})`);
  return join(STAND_IN_DIR, 'web-process.js');
}

/** RSS of the stand-in once it printed "running" (Telegram polled, the web port bound). */
function standInRss(script: string, withWeb: boolean): Promise<number | undefined> {
  return withStartFakes('hob-bench-web-', async (fakes) => {
    const args = [script, writeStartConfig(fakes), ...(withWeb ? ['web', String(await freePort())] : ['telegram'])];
    const child = spawn(process.execPath, args, { cwd: root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await Promise.race([
        new Promise<void>((resolve) => createInterface({ input: child.stdout }).on('line', (line) => line === 'running' && resolve())),
        exited.then((code) => Promise.reject(new Error(`the stand-in exited ${code}`))),
      ]);
      await fakes.telegram.waitForCall('getUpdates', () => true, 20_000);
      return residentBytes(child.pid);
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    }
  });
}

function hobStartRss(): Promise<number | undefined> {
  return withStartFakes('hob-bench-web-', async (fakes) => {
    const hob = spawnHobStart(writeStartConfig(fakes));
    try {
      await firstPoll(hob, fakes.telegram);
      return residentBytes(hob.child.pid);
    } finally {
      await hob.stop();
    }
  });
}

const mb = (samples: (number | undefined)[]) => {
  const known = samples.filter((sample): sample is number => sample !== undefined);
  return known.length ? median(known) / 1024 / 1024 : Number.NaN;
};

export async function run(): Promise<BenchResult> {
  const latencies = await replyOverhead();
  const script = await bundleStandIn();
  const hobStart: (number | undefined)[] = [];
  const telegramOnly: (number | undefined)[] = [];
  const withWeb: (number | undefined)[] = [];
  try {
    for (let index = 0; index < STARTS; index++) {
      hobStart.push(await hobStartRss());
      telegramOnly.push(await standInRss(script, false));
      withWeb.push(await standInRss(script, true));
    }
  } finally {
    rmSync(STAND_IN_DIR, { recursive: true, force: true });
  }
  const lines = [
    `Web reply overhead (page POST → answer on its event stream, instant model, loopback): median ${fmt(median(latencies))} ms, p99 ${fmt(percentile(latencies, 0.99))} ms (${MESSAGES} messages one at a time)`,
    `RSS once running: hob start with Telegram ${fmt(mb(hobStart))} MB; the stand-in with Telegram ${fmt(mb(telegramOnly))} MB, with Telegram and the web chat ${fmt(mb(withWeb))} MB (+${fmt(mb(withWeb) - mb(telegramOnly))} MB; ${STARTS} runs each)`,
  ];
  for (const line of lines) console.log(line);
  return { name: 'web', summary: lines };
}

runIfMain(import.meta.url, run);
