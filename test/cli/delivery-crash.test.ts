import '../support/env.js';
import { describe, expect, it, type TestContext } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, unsettled, writeConfig, type HobProcess } from '../support/hob-process.js';

/**
 * `hob start` killed (SIGKILL) while it delivers, on the fake Slack and Discord: after a 429
 * whose retry the platform took just before the kill, in the middle of a split answer, and at
 * each step of a live answer (HOB_FAULT=delivery:<step>). Each restart must leave every chat
 * with each answer once, whole, and no cut-off text. One chain of starts per platform: a start
 * with a fault settles what the last one left, then is itself killed at its step (it shows no
 * live answer of its own before that, or the fault would hit that one). These hobs show the
 * live answer from the first words (`gateway.busy_after_ms: 0`; by default an answer quicker
 * than a second is sent whole, with no live message to kill), so an answer here needs to last
 * only as long as its step does: past the platform's edit interval (1.2 s) where the kill is
 * at an edit, a few tenths of a second elsewhere.
 */

/**
 * A chain's fakes and the hobs it starts, stopped when its test ends. The two platforms' chains
 * share nothing (each its own fakes, folder and hobs), so they run at the same time: most of a
 * chain is waiting on a starting process or a written answer.
 */
async function fakesFor<Platform extends { close(): Promise<void> }>(platform: Promise<Platform>, { onTestFinished }: TestContext): Promise<{ model: FakeAnthropic; fake: Platform; processes: HobProcess[] }> {
  const processes: HobProcess[] = [];
  const [model, fake] = await Promise.all([startFakeAnthropic(), platform]);
  onTestFinished(async () => {
    for (const hob of processes) hob.kill();
    await fake.close().catch(() => undefined);
    await model.close();
  });
  return { model, fake, processes };
}

const MINUTES = 60_000;
const NAMES = ['Ann', 'Bob', 'Cid', 'Dan', 'Eve', 'Fay'];

type Person = { id: string; name: string };

/** How the chain drives one platform's fake. */
type CrashBed = {
  /** The config line under `channels:` for this platform, allowing these people. */
  channel(people: Person[]): string;
  /** What `hob start` prints once this platform is up. */
  ready: string;
  /** The longest message: a long answer is split at it. */
  limit: number;
  person(index: number): Person;
  ask(person: Person, text: string): Promise<void>;
  texts(person: Person): string[];
  /** The next message created in the person's chat gets a 429; its retry is carried out and its answer held back. */
  refuseThenHold(person: Person): { arrived: Promise<void> };
  /** The platform's clock moves on (Discord forgets nonces, Slack's timestamps move). */
  later(ms: number): void;
};

/** A long answer in paragraphs: split in three or more parts. */
function longAnswer(limit: number): string {
  return Array.from({ length: 9 }, (_, n) => `Part ${n}: ${'steady words '.repeat(Math.ceil(limit / 40))}`.trim()).join('\n\n');
}

/** The chain both platforms go through; returns the running hob (to go on) and how to check a chat. */
async function liveAnswerChain(bed: CrashBed, fakeModel: FakeAnthropic, processes: HobProcess[]) {
  const people = NAMES.map((_, index) => bed.person(index));
  const [ann, bob, cid, dan, eve, fay] = people as [Person, Person, Person, Person, Person, Person];
  const dir = tempDir('hob-crash-');
  const config = writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${fakeModel.baseUrl}, retry: { max_attempts: 1 } }
gateway: { busy_after_ms: 0 }
channels:
  console: { enabled: false }
  ${bed.channel(people)}
`,
  );
  const started = async (fault?: string) => {
    const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
    processes.push(hob);
    await hob.waitFor(bed.ready, 20_000);
    return hob;
  };
  const waitSettled = async (probe: () => boolean, what: string, person: Person, settled = true) => {
    for (let waited = 0; waited < 20_000; waited += 20) {
      // The chat first (in memory); the outbox (a database opened anew, ~1 ms of CPU) only then.
      if (probe() && (!settled || unsettled(dir) === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}; chat: ${JSON.stringify(bed.texts(person))}; unsettled: ${unsettled(dir)}; output: ${processes.at(-1)?.output().slice(-2000)}`);
  };
  const settledWith = (person: Person, expected: string[], what: string) => waitSettled(() => JSON.stringify(bed.texts(person)) === JSON.stringify(expected), what, person);

  // 1. The live message's create gets a 429; the platform takes the retry, and hob is killed
  //    before it hears back. Minutes later the restart finds the message (metadata, or text).
  let hob = await started();
  fakeModel.push({ text: 'Answer one, complete.', chunks: 3, chunkDelayMs: 150 });
  let hold = bed.refuseThenHold(ann);
  await bed.ask(ann, 'first question');
  await hold.arrived;
  hob.kill();
  await hob.exited;
  bed.later(5 * MINUTES);

  // 2. Killed after the answer was recorded, before the live message was asked to become it.
  hob = await started('answer-recorded');
  await settledWith(ann, ['Answer one, complete.'], 'answer one, once');
  fakeModel.push({ text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 150 });
  await bed.ask(bob, 'second question');
  await hob.exited;

  // 3. Killed after the platform took the end of the live answer, before the outbox mark.
  hob = await started('live-finished');
  await settledWith(bob, ['Answer two, complete.'], 'answer two, once');
  fakeModel.push({ text: 'Answer three, complete.', chunks: 3, chunkDelayMs: 150 });
  await bed.ask(cid, 'third question');
  await hob.exited;

  // 4. Killed right after the live message was created and recorded, the model still writing:
  //    the restart removes the cut-off text and the resumed run answers.
  hob = await started('live-started');
  await settledWith(cid, ['Answer three, complete.'], 'answer three, once');
  fakeModel.push({ text: 'A slow first try at answer four', chunks: 6, chunkDelayMs: 200 }, { text: 'Answer four, whole.' });
  await bed.ask(dan, 'fourth question');
  await hob.exited;

  // 5. A split answer: its live message becomes the first part; the second part's create gets
  //    a 429, the platform takes the retry, kill. (This start, with no fault, first shows the
  //    resumed run's answer four: a start with a fault would be killed in that one.)
  hob = await started();
  await settledWith(dan, ['Answer four, whole.'], 'answer four, once, the cut-off try gone');
  const long = longAnswer(bed.limit);
  fakeModel.push({ text: long, chunks: 6, chunkDelayMs: 200 });
  await bed.ask(fay, 'a long answer please');
  await waitSettled(() => bed.texts(fay).length === 1, 'the live message', fay, false);
  hold = bed.refuseThenHold(fay);
  await hold.arrived;
  hob.kill();
  await hob.exited;
  bed.later(5 * MINUTES);

  // 6. Killed after an edit of the live message, mid-way. This start first sends the rest of
  //    the split answer (whole messages, no live answer for the fault to hit).
  hob = await started('live-updated');
  await waitSettled(() => bed.texts(fay).join('\n\n') === long, 'the long answer, each part once', fay);
  fakeModel.push({ text: 'A slow first try at answer five', chunks: 8, chunkDelayMs: 300 }, { text: 'Answer five, whole.' });
  await bed.ask(eve, 'fifth question');
  await hob.exited;
  return {
    people,
    started,
    settledWith,
    /** In a start with no fault (the resumed run shows a live answer): answer five and every chat as it should be. */
    checkAll: async () => {
      await settledWith(eve, ['Answer five, whole.'], 'answer five, once, the cut-off try gone');
      expect(bed.texts(fay).join('\n\n')).toBe(long);
      expect(bed.texts(fay).length).toBeGreaterThan(2);
      for (const person of people.slice(0, 5)) expect(bed.texts(person)).toHaveLength(1);
    },
  };
}

describe.concurrent('hob start killed while it delivers', () => {
  it('Slack: each answer is in the chat once and whole after every kill (a 429 then a kill, a split answer, each step of an edited live answer and of a stream)', async (context) => {
    const { model, fake, processes } = await fakesFor<FakeSlack>(startFakeSlack(), context);
    const chain = await liveAnswerChain(
      {
        // Gus and Hal ask in assistant-pane threads after the chain (streams).
        channel: (people) => `slack: { bot_token: ${fake.botToken}, app_token: ${fake.appToken}, api_url: "${fake.apiUrl}", allow_from: [${[...people.map((person) => person.id), 'UGUS6', 'UHAL7'].map((id) => `"${id}"`).join(', ')}] }`,
        ready: 'hob is running on slack',
        limit: 3000,
        person: (index) => fake.person({ id: `U${(NAMES[index] ?? 'X').toUpperCase()}${index}`, name: NAMES[index] ?? 'X' }),
        ask: async (person, text) => void (await fake.dm(person, text)),
        texts: (person) => fake.seen(dmOf(person.id)).map((message) => message.text),
        refuseThenHold: () => {
          fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 });
          return fake.web.holdNext('chat.postMessage');
        },
        later: (ms) => void (fake.web.clockOffsetMs += ms),
      },
      model,
      processes,
    );
    const streamed = (person: Person) => fake.seen(dmOf(person.id)).map((message) => message.text);
    const [gus, hal] = [fake.person({ id: 'UGUS6', name: 'Gus' }), fake.person({ id: 'UHAL7', name: 'Hal' })];

    let hob = await chain.started();
    await chain.checkAll();
    hob.kill();
    await hob.exited;

    // 7. A stream (an assistant-pane thread), killed after its answer was recorded.
    hob = await chain.started('answer-recorded');
    model.push({ text: 'Streamed answer seven, complete.', chunks: 3, chunkDelayMs: 150 });
    await fake.assistantThreadStarted(gus, '1800000000.000100');
    await fake.dm(gus, 'seventh question', { threadTs: '1800000000.000100' });
    await hob.exited;

    // 8. A stream killed mid-way.
    hob = await chain.started('live-updated');
    await fake.waitFor(() => JSON.stringify(streamed(gus)) === '["Streamed answer seven, complete."]', 20_000, 'answer seven, once');
    model.push({ text: 'A slow first stream of answer eight', chunks: 8, chunkDelayMs: 300 }, { text: 'Streamed answer eight, whole.' });
    await fake.assistantThreadStarted(hal, '1800000000.000200');
    await fake.dm(hal, 'eighth question', { threadTs: '1800000000.000200' });
    await hob.exited;

    hob = await chain.started();
    await chain.settledWith(hal, ['Streamed answer eight, whole.'], 'answer eight, once, the cut-off stream gone');
    expect(fake.web.messages.filter((message) => message.stream === 'streaming' && !message.deleted)).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);

  it('Discord: each answer is in the channel once and whole after every kill (a 429 then a kill minutes before the restart, a split answer, each step of a live answer)', async (context) => {
    const { model, fake, processes } = await fakesFor<FakeDiscord>(startFakeDiscord(), context);
    const created = (person: Person) => new RegExp(`^POST /channels/${fake.dmChannelOf(person)}/messages$`);
    const chain = await liveAnswerChain(
      {
        channel: (people) => `discord: { token: "${fake.token}", api_url: ${fake.apiRoot}, allow_from: [${people.map((person) => `"${person.id}"`).join(', ')}] }`,
        ready: 'hob is running on discord',
        limit: 2000,
        person: (index) => ({ id: String(500 + index), name: NAMES[index] ?? 'X' }),
        ask: async (person, text) => void fake.dm(person, text),
        texts: (person) => fake.botMessages(fake.dmChannelOf(person)).map((message) => message.content),
        refuseThenHold: (person) => {
          fake.rateLimitNext(created(person), 1);
          return fake.holdNext(created(person));
        },
        later: (ms) => void (fake.clockOffsetMs += ms),
      },
      model,
      processes,
    );
    const hob = await chain.started();
    await chain.checkAll();
    // The live message became the first part: nothing was posted and deleted again.
    const fay = chain.people[5] as Person;
    expect(fake.restCalls('DELETE', new RegExp(`/channels/${fake.dmChannelOf(fay)}/`))).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);
});
