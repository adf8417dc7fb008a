import '../support/env.js';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

/**
 * `hob start` killed (SIGKILL) while it delivers, on the fake Slack and Discord: after a 429
 * whose retry the platform took just before the kill, in the middle of a split answer, and at
 * each step of a live answer (HOB_FAULT=delivery:<step>). Each restart must leave every chat
 * with each answer once, whole, and no cut-off text. One process chain per platform: each
 * start settles the previous step and is itself killed at the next one.
 */

let model: FakeAnthropic | undefined;
let slack: FakeSlack | undefined;
let discord: FakeDiscord | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await slack?.close().catch(() => undefined);
  await discord?.close();
  await model?.close();
  slack = undefined;
  discord = undefined;
});

const MINUTES = 60_000;
const PEOPLE = ['Ann', 'Bob', 'Cid', 'Dan', 'Eve', 'Fay', 'Gus', 'Hal'].map((name, index) => ({ name, id: `${name.toUpperCase()}${index}` }));

/** Rows the outbox has not settled: live messages or deliveries still pending. */
function unsettled(dir: string): number {
  const db = new Database(join(dir, 'data', 'hob.db'), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) n FROM outbox WHERE status IN ('live', 'pending')").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function start(config: string, fault?: string): HobProcess {
  const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
  running.push(hob);
  return hob;
}

/** A long answer in paragraphs: split in three or more parts on either platform. */
function longAnswer(limit: number): string {
  return Array.from({ length: 9 }, (_, n) => `Part ${n}: ${'steady words '.repeat(Math.ceil(limit / 40))}`.trim()).join('\n\n');
}

describe('hob start killed while it delivers', () => {
  it('Slack: each answer is in the chat once and whole after every kill (a 429 then a kill, a split answer, each step of an edited live answer and of a stream)', async () => {
    model = await startFakeAnthropic();
    slack = await startFakeSlack();
    const fake = slack;
    const people = PEOPLE.map((person) => fake.person({ id: `U${person.id}`, name: person.name }));
    const [ann, bob, cid, dan, eve, fay, gus, hal] = people as [typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number]];
    const dir = tempDir('hob-slack-crash-');
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  slack: { bot_token: ${fake.botToken}, app_token: ${fake.appToken}, api_url: "${fake.apiUrl}", allow_from: [${people.map((person) => `"${person.id}"`).join(', ')}] }
`,
    );
    const texts = (person: { id: string }) => fake.seen(dmOf(person.id)).map((message) => message.text);
    const settledWith = async (person: { id: string }, expected: string[], what: string) => {
      await fake.waitFor(() => unsettled(dir) === 0 && JSON.stringify(texts(person)) === JSON.stringify(expected), 20_000, what).catch((error: unknown) => {
        throw new Error(`${String(error)}; chat: ${JSON.stringify(texts(person))}; unsettled: ${unsettled(dir)}; output: ${running.at(-1)?.output().slice(-3000)}`);
      });
      expect(fake.web.messages.filter((message) => message.stream === 'streaming' && !message.deleted)).toEqual([]);
    };
    const started = async (fault?: string) => {
      const hob = start(config, fault);
      await hob.waitFor('hob is running on slack', 20_000);
      return hob;
    };

    // 1. The live message's post gets a 429; Slack takes the retry, and hob is killed before
    //    it hears back. Minutes later the restart finds the message by its metadata.
    let hob = await started();
    model.push({ text: 'Answer one, complete.' });
    fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 });
    let hold = fake.web.holdNext('chat.postMessage');
    await fake.dm(ann, 'first question');
    await hold.arrived;
    hob.kill();
    await hob.exited;
    fake.web.clockOffsetMs += 5 * MINUTES;

    // 2. Killed after the answer was recorded, before the live message was asked to become it.
    //    (A start with a fault only settles what the last one left: it shows no live answer itself.)
    hob = await started('answer-recorded');
    await settledWith(ann, ['Answer one, complete.'], 'answer one, once');
    model.push({ text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 100 });
    await fake.dm(bob, 'second question');
    await hob.exited;

    // 3. Killed after Slack took the end of the live answer, before the outbox mark.
    hob = await started('live-finished');
    await settledWith(bob, ['Answer two, complete.'], 'answer two, once');
    model.push({ text: 'Answer three, complete.', chunks: 3, chunkDelayMs: 100 });
    await fake.dm(cid, 'third question');
    await hob.exited;

    // 4. Killed right after the live message was created and recorded, the model still writing.
    hob = await started('live-started');
    await settledWith(cid, ['Answer three, complete.'], 'answer three, once');
    model.push({ text: 'A slow first try at answer four', chunks: 6, chunkDelayMs: 400 }, { text: 'Answer four, whole.' });
    await fake.dm(dan, 'fourth question');
    await hob.exited;

    // The restart removes the cut-off text and the resumed run answers.
    hob = await started();
    await settledWith(dan, ['Answer four, whole.'], 'answer four, once, the cut-off try gone');
    hob.kill();
    await hob.exited;

    // 5. Killed after an edit of the live message, mid-way.
    hob = await started('live-updated');
    model.push({ text: 'A slow first try at answer five', chunks: 8, chunkDelayMs: 500 }, { text: 'Answer five, whole.' });
    await fake.dm(eve, 'fifth question');
    await hob.exited;

    // 6. A split answer: the second part's post gets a 429, Slack takes the retry, kill.
    hob = await started();
    await settledWith(eve, ['Answer five, whole.'], 'answer five, once, the cut-off try gone');
    const long = longAnswer(3000);
    model.push({ text: long, chunks: 6, chunkDelayMs: 300 });
    await fake.dm(fay, 'a long answer please');
    await fake.waitFor(() => texts(fay).length === 1, 10_000, 'the live message');
    fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 });
    hold = fake.web.holdNext('chat.postMessage');
    await hold.arrived;
    hob.kill();
    await hob.exited;
    fake.web.clockOffsetMs += 5 * MINUTES;

    // 7. A stream (an assistant-pane thread), killed after its answer was recorded.
    hob = await started('answer-recorded');
    await fake.waitFor(() => unsettled(dir) === 0 && texts(fay).join('\n\n') === long, 20_000, 'the long answer, each part once');
    expect(texts(fay).length).toBeGreaterThan(2);
    model.push({ text: 'Streamed answer seven, complete.', chunks: 3, chunkDelayMs: 100 });
    await fake.assistantThreadStarted(gus, '1800000000.000100');
    await fake.dm(gus, 'seventh question', { threadTs: '1800000000.000100' });
    await hob.exited;

    // 8. A stream killed mid-way.
    hob = await started('live-updated');
    await settledWith(gus, ['Streamed answer seven, complete.'], 'answer seven, once');
    model.push({ text: 'A slow first stream of answer eight', chunks: 8, chunkDelayMs: 400 }, { text: 'Streamed answer eight, whole.' });
    await fake.assistantThreadStarted(hal, '1800000000.000200');
    await fake.dm(hal, 'eighth question', { threadTs: '1800000000.000200' });
    await hob.exited;

    hob = await started();
    await settledWith(hal, ['Streamed answer eight, whole.'], 'answer eight, once, the cut-off stream gone');
    for (const person of people.slice(0, 5)) expect(texts(person)).toHaveLength(1);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);

  it('Discord: each answer is in the channel once and whole after every kill (a 429 then a kill minutes before the restart, a split answer, each step of a live answer)', async () => {
    model = await startFakeAnthropic();
    discord = await startFakeDiscord();
    const fake = discord;
    const people = PEOPLE.slice(0, 6).map((person, index) => ({ id: String(500 + index), name: person.name }));
    const [ann, bob, cid, dan, eve, fay] = people as [typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number], typeof people[number]];
    const dir = tempDir('hob-discord-crash-');
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  discord: { token: "${fake.token}", api_url: ${fake.apiRoot}, allow_from: [${people.map((person) => `"${person.id}"`).join(', ')}] }
`,
    );
    const texts = (person: { id: string; name: string }) => fake.botMessages(fake.dmChannelOf(person)).map((message) => message.content);
    const settledWith = (person: { id: string; name: string }, expected: string[], what: string) =>
      fake.waitFor(() => unsettled(dir) === 0 && JSON.stringify(texts(person)) === JSON.stringify(expected), 20_000, what).catch((error: unknown) => {
        throw new Error(`${String(error)}; chat: ${JSON.stringify(texts(person))}; unsettled: ${unsettled(dir)}; output: ${running.at(-1)?.output().slice(-3000)}`);
      });
    const started = async (fault?: string) => {
      const hob = start(config, fault);
      await hob.waitFor('hob is running on discord', 20_000);
      return hob;
    };
    const created = (person: { id: string; name: string }) => new RegExp(`^POST /channels/${fake.dmChannelOf(person)}/messages$`);

    // 1. The live message's post gets a 429; Discord takes the retry, hob is killed before it
    //    hears back, and restarts after the nonce is forgotten: found by what it says.
    let hob = await started();
    model.push({ text: 'Answer one, complete.' });
    fake.rateLimitNext(created(ann), 1);
    let hold = fake.holdNext(created(ann));
    fake.dm(ann, 'first question');
    await hold.arrived;
    hob.kill();
    await hob.exited;
    fake.clockOffsetMs += 5 * MINUTES;

    // 2–4. Killed after the answer was recorded; after Discord took the end; right after the
    //      live message was created (the model still writing).
    hob = await started('answer-recorded');
    await settledWith(ann, ['Answer one, complete.'], 'answer one, once');
    model.push({ text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 100 });
    fake.dm(bob, 'second question');
    await hob.exited;

    hob = await started('live-finished');
    await settledWith(bob, ['Answer two, complete.'], 'answer two, once');
    model.push({ text: 'Answer three, complete.', chunks: 3, chunkDelayMs: 100 });
    fake.dm(cid, 'third question');
    await hob.exited;

    hob = await started('live-started');
    await settledWith(cid, ['Answer three, complete.'], 'answer three, once');
    model.push({ text: 'A slow first try at answer four', chunks: 6, chunkDelayMs: 400 }, { text: 'Answer four, whole.' });
    fake.dm(dan, 'fourth question');
    await hob.exited;

    hob = await started();
    await settledWith(dan, ['Answer four, whole.'], 'answer four, once, the cut-off try gone');
    hob.kill();
    await hob.exited;

    // 5. Killed after an edit of the live message, mid-way.
    hob = await started('live-updated');
    model.push({ text: 'A slow first try at answer five', chunks: 8, chunkDelayMs: 500 }, { text: 'Answer five, whole.' });
    fake.dm(eve, 'fifth question');
    await hob.exited;

    // 6. A split answer: the live message becomes the first part; the second part's post gets
    //    a 429, Discord takes the retry, kill; the restart sends no copy of it.
    hob = await started();
    await settledWith(eve, ['Answer five, whole.'], 'answer five, once, the cut-off try gone');
    const long = longAnswer(2000);
    model.push({ text: long, chunks: 6, chunkDelayMs: 300 });
    fake.dm(fay, 'a long answer please');
    await fake.waitFor(() => texts(fay).length === 1, 10_000, 'the live message');
    fake.rateLimitNext(created(fay), 1);
    hold = fake.holdNext(created(fay));
    await hold.arrived;
    hob.kill();
    await hob.exited;

    hob = await started();
    await fake.waitFor(() => unsettled(dir) === 0 && texts(fay).join('\n\n') === long, 20_000, 'the long answer, each part once');
    expect(texts(fay).length).toBeGreaterThan(2);
    // The live message became the first part: nothing was posted and deleted.
    expect(fake.restCalls('DELETE', new RegExp(`/channels/${fake.dmChannelOf(fay)}/`))).toEqual([]);
    for (const person of people.slice(0, 5)) expect(texts(person)).toHaveLength(1);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);
});
