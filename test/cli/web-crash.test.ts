import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webConfigSchema } from '../../adapters/web/config.js';
import { signInLink } from '../../adapters/web/links.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, unsettled, writeConfig, type HobProcess } from '../support/hob-process.js';
import { WebPageClient } from '../support/web-client.js';
import { freePort } from '../support/web-testbed.js';

/**
 * `hob start` with the web chat, killed (SIGKILL) at each step of a live answer
 * (HOB_FAULT=delivery:<step>): after every restart the page shows each answer once, whole,
 * and no cut-off text. This hob shows the live answer from the first words
 * (`gateway.busy_after_ms: 0`; by default an answer quicker than a second is sent whole, with
 * no live message to kill), so an answer here lasts only as long as its step needs.
 */
let model: FakeAnthropic | undefined;
const processes: HobProcess[] = [];
const pages: WebPageClient[] = [];

afterEach(async () => {
  for (const page of pages.splice(0)) page.close();
  for (const hob of processes.splice(0)) hob.kill();
  await model?.close();
  model = undefined;
});

describe('hob start with the web chat, killed while it delivers', () => {
  it('the page shows each answer once and whole after a kill at each step of a live answer', async () => {
    model = await startFakeAnthropic();
    const fakeModel = model;
    const dir = tempDir('hob-web-crash-');
    const port = await freePort();
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${fakeModel.baseUrl}, retry: { max_attempts: 1 } }
gateway: { busy_after_ms: 0 }
channels:
  console: { enabled: false }
  web: { port: ${port}, allow_from: ["ann"] }
`,
    );
    const web = webConfigSchema.parse({ port, allow_from: ['ann'] });
    let page: WebPageClient | undefined;
    const started = async (fault?: string) => {
      const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
      processes.push(hob);
      await hob.waitFor('hob is running on web', 20_000);
      const cookie = page?.cookie;
      page = new WebPageClient(`http://127.0.0.1:${port}`);
      pages.push(page);
      // The same browser after the restart: its session cookie still holds.
      if (cookie) page.cookie = cookie;
      else expect((await page.signIn(signInLink(web, join(dir, 'data'), 'ann', 'Ann').url)).status).toBe(200);
      await page.open();
      return hob;
    };
    const answers = () => (page?.botMessages() ?? []).map((message) => message.text);
    const settledWith = async (expected: string[], what: string) => {
      for (let waited = 0; waited < 20_000; waited += 20) {
        // The page first (in memory); the outbox (a database opened anew, ~1 ms of CPU) only then.
        if (JSON.stringify(answers()) === JSON.stringify(expected) && unsettled(dir) === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`timed out waiting for ${what}; page: ${JSON.stringify(answers())}; unsettled: ${unsettled(dir)}; output: ${processes.at(-1)?.output().slice(-2000)}`);
    };
    const ask = async (text: string) => expect((await page?.say(text))?.ok).toBe(true);

    // 1. Killed after the answer was recorded, before the live message was asked to become it.
    let hob = await started('answer-recorded');
    fakeModel.push({ text: 'Answer one, complete.', chunks: 3, chunkDelayMs: 150 });
    await ask('first question');
    await hob.exited;

    // 2. Killed after the live message became the answer, before the outbox heard so.
    hob = await started('live-finished');
    await settledWith(['Answer one, complete.'], 'answer one, once');
    fakeModel.push({ text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 150 });
    await ask('second question');
    await hob.exited;

    // 3. Killed right after the live message was created and recorded, the model still
    //    writing: the restart removes it and the resumed run answers.
    hob = await started('live-started');
    await settledWith(['Answer one, complete.', 'Answer two, complete.'], 'answer two, once');
    fakeModel.push({ text: 'A slow first try at answer three', chunks: 6, chunkDelayMs: 200 }, { text: 'Answer three, whole.' });
    await ask('third question');
    await hob.exited;

    // 4. Killed after an update of the live message, mid-way.
    hob = await started('live-updated');
    await settledWith(['Answer one, complete.', 'Answer two, complete.', 'Answer three, whole.'], 'answer three, once, the cut-off try gone');
    fakeModel.push({ text: 'A slow first try at answer four', chunks: 8, chunkDelayMs: 200 }, { text: 'Answer four, whole.' });
    await ask('fourth question');
    await hob.exited;

    hob = await started();
    await settledWith(['Answer one, complete.', 'Answer two, complete.', 'Answer three, whole.', 'Answer four, whole.'], 'answer four, once, the cut-off try gone');
    expect(page?.messages.filter((message) => message.live)).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 120_000);
});
