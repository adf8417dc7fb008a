import '../support/env.js';
import { describe, expect, it, type TestContext } from 'vitest';
import { startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, liveMessageRecorded, spawnHob, unsettled, writeConfig, type HobProcess } from '../support/hob-process.js';

/**
 * `hob start` killed (SIGKILL) while it delivers, on the fake Slack and Discord: after a 429
 * whose retry the platform took just before the kill, in the middle of a split answer, and at
 * each step of a live answer. Each restart must leave every chat with each answer once, whole,
 * and no cut-off text. One chain of three starts per platform:
 *  1. Answers are left at every step of a live answer at once, each in its own chat, then the
 *     start is killed: the platform's "ok" for a live message's create held back after a 429
 *     (the retry taken); an answer recorded whose edit never reached the platform; a live
 *     message created and recorded, the model still writing; one edited mid-way, the model
 *     still writing. The kill itself is `HOB_FAULT=delivery:live-finished`: the last answer
 *     is finished on the platform and hob dies before its outbox mark (no other answer gets
 *     that far: each waits on the platform or on the model).
 *  2. The restart settles all of them; then a split answer's second part gets a 429, the
 *     platform takes the retry, kill (the first part was the live message).
 *  3. The restart sends the rest of the split answer.
 * A state left by a held request or a model still writing is the state a kill at that step
 * leaves (the outbox and the chat as they were right after it): the process does nothing
 * more for that answer until the kill. These hobs show the live answer from the first words
 * (`gateway.busy_after_ms: 0`; by default an answer quicker than a second is sent whole, with
 * no live message to kill).
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

/** A held request: `arrived` once the platform has it. */
type Held = { arrived: Promise<void> };

/** How the chain drives one platform's fake. */
type CrashBed = {
  /** The config line under `channels:` for this platform, allowing these people. */
  channel(people: Person[]): string;
  /** What `hob start` prints once this platform is up. */
  ready: string;
  /** The longest message: a long answer is split at it. */
  limit: number;
  person(index: number): Person;
  /** The person's chat with hob, as the outbox names it. */
  chatId(person: Person): string;
  ask(person: Person, text: string): Promise<void>;
  texts(person: Person): string[];
  /** The next message created in the person's chat gets a 429; its retry is carried out and its answer held back. */
  refuseThenHold(person: Person): Held;
  /** The edit that makes the person's live message `text` is held before the platform carries it out. */
  holdFinalEdit(person: Person, text: string): Held;
  /** The platform's clock moves on (Discord forgets nonces, Slack's timestamps move). */
  later(ms: number): void;
};

/** More answers a platform leaves in the first start (before its kill) and checks after the restart. */
type Extra = { leave(): Promise<void>; settled(): Promise<void> };

/** A long answer in paragraphs: split in three or more parts. */
function longAnswer(limit: number): string {
  return Array.from({ length: 9 }, (_, n) => `Part ${n}: ${'steady words '.repeat(Math.ceil(limit / 40))}`.trim()).join('\n\n');
}

/**
 * The fake model answers each question with its own scripts, in order (a resumed run asks
 * again): the answers of several chats are written at the same time.
 */
function answersByQuestion(model: FakeAnthropic): (question: string, ...scripts: AnthropicScript[]) => void {
  const scripts = new Map<string, AnthropicScript[]>();
  model.respondWith((request) => {
    const asked = JSON.stringify(request.body.messages);
    for (const [question, queue] of scripts) if (asked.includes(question)) return queue.shift();
    return undefined;
  });
  return (question, ...answers) => void scripts.set(question, answers);
}

/** The chain both platforms go through; returns how to check a chat and the last start. */
async function liveAnswerChain(bed: CrashBed, fakeModel: FakeAnthropic, processes: HobProcess[], extra?: (answer: ReturnType<typeof answersByQuestion>, settledWith: (person: Person, expected: string[], what: string) => Promise<void>) => Extra) {
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
  const answer = answersByQuestion(fakeModel);
  const started = async (fault?: string) => {
    const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
    processes.push(hob);
    await hob.waitFor(bed.ready, 20_000);
    return hob;
  };
  const waitFor = async (probe: () => boolean, what: string, person: Person, settled = true) => {
    for (let waited = 0; waited < 20_000; waited += 20) {
      // The chat first (in memory); the outbox (a database opened anew, ~1 ms of CPU) only then.
      if (probe() && (!settled || unsettled(dir) === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}; chat: ${JSON.stringify(bed.texts(person))}; unsettled: ${unsettled(dir)}; output: ${processes.at(-1)?.output().slice(-2000)}`);
  };
  const settledWith = (person: Person, expected: string[], what: string) => waitFor(() => JSON.stringify(bed.texts(person)) === JSON.stringify(expected), what, person);
  /** The person's live message shows `text` and hob recorded it: the state a kill right then leaves. */
  const liveShows = (person: Person, text: string, what: string) =>
    waitFor(() => JSON.stringify(bed.texts(person)) === JSON.stringify([text]) && liveMessageRecorded(dir, bed.chatId(person)), what, person, false);
  const more = extra?.(answer, settledWith);

  // 1. One start, killed with an answer left at each step of a live answer.
  let hob = await started('live-finished');
  //  a. The live message's create gets a 429; the platform takes the retry, hob never hears
  //     back. Minutes later the restart finds the message (metadata, or text).
  answer('first question', { text: 'Answer one, complete.', chunks: 3, chunkDelayMs: 150 });
  const annCreated = bed.refuseThenHold(ann);
  await bed.ask(ann, 'first question');
  //  b. The answer recorded, the live message never became it: its edit is still on its way.
  answer('second question', { text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 150 });
  const bobEdit = bed.holdFinalEdit(bob, 'Answer two, complete.');
  await bed.ask(bob, 'second question');
  //  c. The live message created and recorded, the model still writing: the restart removes
  //     the cut-off text and the resumed run answers.
  answer('fourth question', { hang: true, text: 'A slow first try at answer four' }, { text: 'Answer four, whole.' });
  await bed.ask(dan, 'fourth question');
  //  d. The live message edited mid-way (past the platform's edit interval, 1.2 s), the model
  //     still writing.
  answer('fifth question', { hang: true, text: 'A slow first try at answer five', chunks: 2, chunkDelayMs: 1300 }, { text: 'Answer five, whole.' });
  await bed.ask(eve, 'fifth question');
  await more?.leave();
  await Promise.all([annCreated.arrived, bobEdit.arrived]);
  await liveShows(dan, 'A slow first try at answer four', 'the cut-off live message of answer four');
  await liveShows(eve, 'A slow first try at answer five', 'the edited cut-off live message of answer five');
  //  e. The platform takes the end of the live answer, and hob dies before the outbox mark.
  answer('third question', { text: 'Answer three, complete.', chunks: 3, chunkDelayMs: 150 });
  await bed.ask(cid, 'third question');
  await hob.exited;
  expect(bed.texts(cid)).toEqual(['Answer three, complete.']);
  bed.later(5 * MINUTES);

  // 2. The restart settles each of them. Then a split answer: its live message becomes the
  //    first part; the second part's create gets a 429, the platform takes the retry, kill.
  hob = await started();
  await settledWith(ann, ['Answer one, complete.'], 'answer one, once');
  await settledWith(bob, ['Answer two, complete.'], 'answer two, once');
  await settledWith(cid, ['Answer three, complete.'], 'answer three, once');
  await settledWith(dan, ['Answer four, whole.'], 'answer four, once, the cut-off try gone');
  await settledWith(eve, ['Answer five, whole.'], 'answer five, once, the cut-off try gone');
  await more?.settled();
  const long = longAnswer(bed.limit);
  answer('a long answer please', { text: long, chunks: 6, chunkDelayMs: 200 });
  await bed.ask(fay, 'a long answer please');
  await waitFor(() => bed.texts(fay).length === 1, 'the live message', fay, false);
  const partCreated = bed.refuseThenHold(fay);
  await partCreated.arrived;
  hob.kill();
  await hob.exited;
  bed.later(5 * MINUTES);

  // 3. The restart sends the rest of the split answer (whole messages), each part once.
  hob = await started();
  await waitFor(() => bed.texts(fay).join('\n\n') === long, 'the long answer, each part once', fay);
  expect(bed.texts(fay).length).toBeGreaterThan(2);
  for (const person of people.slice(0, 5)) expect(bed.texts(person)).toHaveLength(1);
  return { people, hob };
}

describe.concurrent('hob start killed while it delivers', () => {
  it('Slack: each answer is in the chat once and whole after every kill (a 429 then a kill, a split answer, each step of an edited live answer and of a stream)', async (context) => {
    const { model, fake, processes } = await fakesFor<FakeSlack>(startFakeSlack(), context);
    const inChat = (person: Person) => (params: Record<string, unknown>) => params.channel === dmOf(person.id);
    const streamed = (person: Person) => fake.seen(dmOf(person.id)).map((message) => message.text);
    const [gus, hal] = [fake.person({ id: 'UGUS6', name: 'Gus' }), fake.person({ id: 'UHAL7', name: 'Hal' })];
    const { hob } = await liveAnswerChain(
      {
        // Gus and Hal ask in assistant-pane threads (streams).
        channel: (people) => `slack: { bot_token: ${fake.botToken}, app_token: ${fake.appToken}, api_url: "${fake.apiUrl}", allow_from: [${[...people.map((person) => person.id), gus.id, hal.id].map((id) => `"${id}"`).join(', ')}] }`,
        ready: 'hob is running on slack',
        limit: 3000,
        person: (index) => fake.person({ id: `U${(NAMES[index] ?? 'X').toUpperCase()}${index}`, name: NAMES[index] ?? 'X' }),
        chatId: (person) => dmOf(person.id),
        ask: async (person, text) => void (await fake.dm(person, text)),
        texts: streamed,
        refuseThenHold: (person) => {
          fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 }, inChat(person));
          return fake.web.holdNext('chat.postMessage', { when: inChat(person) });
        },
        holdFinalEdit: (person, text) => fake.web.holdNext('chat.update', { when: (params) => inChat(person)(params) && JSON.stringify(params).includes(text), carriedOut: false }),
        later: (ms) => void (fake.web.clockOffsetMs += ms),
      },
      model,
      processes,
      (answer, settledWith) => ({
        leave: async () => {
          // A stream (an assistant-pane thread) whose answer was recorded; its end is still on its way.
          answer('seventh question', { text: 'Streamed answer seven, complete.', chunks: 3, chunkDelayMs: 150 });
          const stop = fake.web.holdNext('chat.stopStream', { when: inChat(gus), carriedOut: false });
          await fake.assistantThreadStarted(gus, '1800000000.000100');
          await fake.dm(gus, 'seventh question', { threadTs: '1800000000.000100' });
          // A stream cut off mid-way (appended to after it started), the model still writing.
          answer('eighth question', { hang: true, text: 'A slow first stream of answer eight', chunks: 2, chunkDelayMs: 700 }, { text: 'Streamed answer eight, whole.' });
          await fake.assistantThreadStarted(hal, '1800000000.000200');
          await fake.dm(hal, 'eighth question', { threadTs: '1800000000.000200' });
          await stop.arrived;
          await fake.waitFor(() => fake.web.calls.some((call) => call.method === 'chat.appendStream' && inChat(hal)(call.params)) && JSON.stringify(streamed(hal)) === '["A slow first stream of answer eight"]', 20_000, 'the cut-off stream of answer eight');
        },
        settled: async () => {
          await settledWith(gus, ['Streamed answer seven, complete.'], 'answer seven, once');
          await settledWith(hal, ['Streamed answer eight, whole.'], 'answer eight, once, the cut-off stream gone');
        },
      }),
    );
    expect(streamed(gus)).toEqual(['Streamed answer seven, complete.']);
    expect(streamed(hal)).toEqual(['Streamed answer eight, whole.']);
    expect(fake.web.messages.filter((message) => message.stream === 'streaming' && !message.deleted)).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);

  it('Discord: each answer is in the channel once and whole after every kill (a 429 then a kill minutes before the restart, a split answer, each step of a live answer)', async (context) => {
    const { model, fake, processes } = await fakesFor<FakeDiscord>(startFakeDiscord(), context);
    const created = (person: Person) => new RegExp(`^POST /channels/${fake.dmChannelOf(person)}/messages$`);
    const { people, hob } = await liveAnswerChain(
      {
        channel: (people) => `discord: { token: "${fake.token}", api_url: ${fake.apiRoot}, allow_from: [${people.map((person) => `"${person.id}"`).join(', ')}] }`,
        ready: 'hob is running on discord',
        limit: 2000,
        person: (index) => ({ id: String(500 + index), name: NAMES[index] ?? 'X' }),
        chatId: (person) => fake.dmChannelOf(person),
        ask: async (person, text) => void fake.dm(person, text),
        texts: (person) => fake.botMessages(fake.dmChannelOf(person)).map((message) => message.content),
        refuseThenHold: (person) => {
          fake.rateLimitNext(created(person), 1);
          return fake.holdNext(created(person));
        },
        holdFinalEdit: (person, text) => fake.holdNext(new RegExp(`^PATCH /channels/${fake.dmChannelOf(person)}/messages/\\d+$`), { when: (body) => body.content === text, carriedOut: false }),
        later: (ms) => void (fake.clockOffsetMs += ms),
      },
      model,
      processes,
    );
    // The live message became the first part: nothing was posted and deleted again.
    const fay = people[5] as Person;
    expect(fake.restCalls('DELETE', new RegExp(`/channels/${fake.dmChannelOf(fay)}/`))).toEqual([]);
    hob.child.kill('SIGTERM');
    await hob.exited;
  }, 180_000);
});
