import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webConfigSchema } from '../../adapters/web/config.js';
import { signInLink } from '../../adapters/web/links.js';
import { startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, liveMessageRecorded, spawnHob, unsettled, writeConfig, type HobProcess } from '../support/hob-process.js';
import { WebPageClient } from '../support/web-client.js';
import { freePort } from '../support/web-testbed.js';

/**
 * `hob start` with the web chat, killed (SIGKILL) at each step of a live answer: after every
 * restart each page shows each answer once, whole, and no cut-off text. One chain of three
 * starts, four people, each answer left at its own step:
 *  1. Ann's live message created and recorded, the model still writing; Bob's updated mid-way,
 *     the model still writing; then the start is killed (HOB_FAULT=delivery:answer-recorded)
 *     once Cid's answer is recorded, before his live message was asked to become it.
 *  2. The restart settles Cid's answer and removes Ann's and Bob's cut-off text; their resumed
 *     runs are cut off again, still writing, and the start is killed
 *     (HOB_FAULT=delivery:live-finished) once Dan's live message became his answer, before the
 *     outbox heard so.
 *  3. The restart settles everything: each answer once and whole.
 * A state left by a model still writing is the state a kill at that step leaves (the outbox
 * and the page as they were right after it): the process does nothing more for that answer
 * until the kill. This hob shows the live answer from the first words
 * (`gateway.busy_after_ms: 0`; by default an answer quicker than a second is sent whole, with
 * no live message to kill).
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

const PEOPLE = ['ann', 'bob', 'cid', 'dan'] as const;
type Person = (typeof PEOPLE)[number];

describe('hob start with the web chat, killed while it delivers', () => {
  it('each page shows each answer once and whole after a kill at each step of a live answer', async () => {
    model = await startFakeAnthropic();
    const fakeModel = model;
    const dir = tempDir('hob-web-crash-');
    const port = await freePort();
    const allow = `[${PEOPLE.map((person) => `"${person}"`).join(', ')}]`;
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${fakeModel.baseUrl}, retry: { max_attempts: 1 } }
gateway: { busy_after_ms: 0 }
channels:
  console: { enabled: false }
  web: { port: ${port}, allow_from: ${allow} }
`,
    );
    const web = webConfigSchema.parse({ port, allow_from: [...PEOPLE] });
    // The fake model answers each question with its own scripts, in order (a resumed run asks again: the next one).
    const scripts = new Map<string, AnthropicScript[]>();
    fakeModel.respondWith((request) => {
      const asked = JSON.stringify(request.body.messages);
      for (const [question, queue] of scripts) if (asked.includes(question)) return queue.shift();
      return undefined;
    });
    let page = {} as Record<Person, WebPageClient>;
    const started = async (fault: string | undefined) => {
      const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
      processes.push(hob);
      await hob.waitFor('hob is running on web', 20_000);
      const before = page;
      page = {} as Record<Person, WebPageClient>;
      await Promise.all(
        PEOPLE.map(async (person) => {
          const opened = new WebPageClient(`http://127.0.0.1:${port}`);
          pages.push(opened);
          // The same browser after the restart: its session cookie still holds.
          const cookie = before[person]?.cookie;
          if (cookie) opened.cookie = cookie;
          else expect((await opened.signIn(signInLink(web, join(dir, 'data'), person, person).url)).status).toBe(200);
          await opened.open();
          page[person] = opened;
        }),
      );
      return hob;
    };
    const answers = (person: Person) => page[person].botMessages().map((message) => message.text);
    const shows = (person: Person, expected: string[]) => JSON.stringify(answers(person)) === JSON.stringify(expected);
    const ask = async (person: Person, question: string, ...answered: AnthropicScript[]) => {
      scripts.set(question, answered);
      expect((await page[person].say(question)).ok).toBe(true);
    };
    /** The person's live message shows `text` and hob recorded it: the state a kill right then leaves. */
    const liveShows = async (person: Person, text: string) => {
      await page[person].waitFor(() => shows(person, [text]), `${person}'s live message "${text}"`, 20_000);
      await page[person].waitFor(() => liveMessageRecorded(dir, person), `${person}'s live message recorded`, 20_000);
    };
    /** Every page shows what it should and the outbox has nothing left to settle. */
    const settled = async (expected: Record<Person, string[]>) => {
      for (const person of PEOPLE) await page[person].waitFor(() => shows(person, expected[person]), `${person}'s answers ${JSON.stringify(expected[person])}`, 20_000);
      for (let waited = 0; unsettled(dir) > 0; waited += 20) {
        if (waited > 20_000) throw new Error(`the outbox did not settle: ${unsettled(dir)} rows; output: ${processes.at(-1)?.output().slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (const person of PEOPLE) expect(answers(person)).toEqual(expected[person]);
    };

    // 1. Ann's live message created and recorded, Bob's updated mid-way (its second words come
    //    once the page shows the first: an edit, however slow the machine), both models still
    //    writing; then Cid's answer recorded, and the kill.
    let hob = await started('answer-recorded');
    await ask('ann', 'third question', { hang: true, text: 'A slow first try at answer three' }, { hang: true, text: 'A slow second try at answer three' }, { text: 'Answer three, whole.' });
    await liveShows('ann', 'A slow first try at answer three');
    const bobShowsWords = () => page.bob.waitFor(() => answers('bob').length === 1 || undefined, "Bob's first words", 20_000);
    await ask('bob', 'fourth question', { hang: true, text: 'A slow first try at answer four', chunks: 2, nextChunk: bobShowsWords }, { hang: true, text: 'A slow second try at answer four' }, { text: 'Answer four, whole.' });
    await liveShows('bob', 'A slow first try at answer four');
    await ask('cid', 'first question', { text: 'Answer one, complete.', chunks: 3, chunkDelayMs: 150 });
    await hob.exited;

    // 2. Cid's answer settled; Ann's and Bob's cut-off text gone, their resumed runs cut off
    //    again; then Dan's live message became his answer, and the kill.
    hob = await started('live-finished');
    await page.cid.waitFor(() => shows('cid', ['Answer one, complete.']), "Cid's answer once", 20_000);
    await liveShows('ann', 'A slow second try at answer three');
    await liveShows('bob', 'A slow second try at answer four');
    await ask('dan', 'second question', { text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 150 });
    await hob.exited;

    // 3. Everything settled: each answer once and whole, no live message left.
    hob = await started(undefined);
    await settled({ ann: ['Answer three, whole.'], bob: ['Answer four, whole.'], cid: ['Answer one, complete.'], dan: ['Answer two, complete.'] });
    for (const person of PEOPLE) expect(page[person].messages.filter((message) => message.live)).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 120_000);
});
