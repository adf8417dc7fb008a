/**
 * The web chat: what hob adds to a reply there, and how much memory serving it costs.
 *
 * - Reply overhead: the real web adapter and gateway in this process, an instant model, a page
 *   signed in over real HTTP (test/support/web-client.ts). Timed from the page's POST of a
 *   message to the answer arriving on its event stream, one message after another: the HTTP
 *   round trip, the gateway (access, inbox, queue, engine, SQLite, outbox), the answer stored
 *   in web.db (a quick answer is sent whole, with no live answer before it), and the SSE
 *   frames back.
 * - Memory: resident memory of the bundled `hob start` once every channel is up, with
 *   Telegram, and with Telegram and the web chat: the difference is what the web chat costs.
 */
import { rmSync } from 'node:fs';
import { createWebAdapter } from '../adapters/web/web-adapter.js';
import { webConfigSchema } from '../adapters/web/config.js';
import { signInLink } from '../adapters/web/links.js';
import { tempDir } from '../test/support/engine.js';
import { startTestGateway } from '../test/support/gateway.js';
import { WebPageClient } from '../test/support/web-client.js';
import { freePort } from '../test/support/web-testbed.js';
import { firstPoll, residentBytes, spawnHobStart, withStartFakes, writeStartConfig } from './hob-process.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const MESSAGES = 300;
const WARMUP = 20;
const STARTS = 5;
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

/** RSS of `hob start` once every channel is up: Telegram alone, or Telegram and the web chat. */
function hobStartRss(withWeb: boolean): Promise<number | undefined> {
  return withStartFakes('hob-bench-web-', async (fakes) => {
    const web = withWeb ? `  web: { port: ${await freePort()}, allow_from: ["100"] }\n` : '';
    const hob = spawnHobStart(writeStartConfig(fakes, web));
    try {
      await firstPoll(hob, fakes.telegram);
      while (hob.runningMs() === undefined) await Promise.race([new Promise((resolve) => setTimeout(resolve, 20)), hob.failed]);
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
  const telegramOnly: (number | undefined)[] = [];
  const withWeb: (number | undefined)[] = [];
  for (let index = 0; index < STARTS; index++) {
    telegramOnly.push(await hobStartRss(false));
    withWeb.push(await hobStartRss(true));
  }
  const lines = [
    `Web reply overhead (page POST → answer on its event stream, instant model, loopback): median ${fmt(median(latencies))} ms, p99 ${fmt(percentile(latencies, 0.99))} ms (${MESSAGES} messages one at a time)`,
    `RSS once running: hob start with Telegram ${fmt(mb(telegramOnly))} MB, with Telegram and the web chat ${fmt(mb(withWeb))} MB (+${fmt(mb(withWeb) - mb(telegramOnly))} MB; ${STARTS} runs each)`,
  ];
  for (const line of lines) console.log(line);
  return { name: 'web', summary: lines };
}

runIfMain(import.meta.url, run);
