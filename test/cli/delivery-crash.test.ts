import '../support/env.js';
import { describe, expect, it } from 'vitest';
import { startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, liveMessageRecorded, spawnHob, unsettled, writeConfig, type HobProcess } from '../support/hob-process.js';

/**
 * `hob start` killed (SIGKILL) while it delivers, on the fake Slack and Discord at once: after
 * a 429 whose retry the platform took just before the kill, in the middle of a split answer,
 * and at each step of a live answer. Each restart must leave every chat with each answer
 * once, whole, and no cut-off text. One chain of three starts, serving both platforms:
 *  1. Answers are left at every step of a live answer at once, each in its own chat, then the
 *     start is killed: the platform's "ok" for a live message's create held back after a 429
 *     (the retry taken); an answer recorded whose edit never reached the platform; a live
 *     message created and recorded, the model still writing; one edited mid-way, the model
 *     still writing; one the platform finished whose "ok" never came back. The kill itself is
 *     `HOB_FAULT=delivery:live-finished` on the last answer (on Discord): the platform
 *     finished it and hob dies before its outbox mark. No other answer gets that far: each
 *     waits on the platform or on the model.
 *  2. The restart settles all of them; then a split answer's second part gets a 429, the
 *     platform takes the retry, kill (the first part was the live message).
 *  3. The restart sends the rest of the split answer.
 * A background task (on Slack) is cut off by the first kill too, mid-turn: the restart
 * resumes it from its stored history and delivers its result once.
 * A state left by a held request or a model still writing is the state a kill at that step
 * leaves (the outbox and the chat as they were right after it): the process does nothing
 * more for that answer until the kill. These hobs show the live answer from the first words
 * (`gateway.busy_after_ms: 0`; by default an answer quicker than a second is sent whole, with
 * no live message to kill).
 */

const MINUTES = 60_000;
const NAMES = ['Ann', 'Bob', 'Cid', 'Dan', 'Eve', 'Fay'];

type Person = { id: string; name: string };
/** Ann, Bob, Cid, Dan, Eve and Fay on one platform. */
type People = [Person, Person, Person, Person, Person, Person];

/** A held request: `arrived` once the platform has it. */
type Held = { arrived: Promise<void> };

/** The fake model's scripts for one question (a resumed run asks again: the next one). */
type Answer = (question: string, ...scripts: AnthropicScript[]) => void;

/** How the chain drives one platform's fake. */
type CrashBed = {
  name: string;
  /** The config line under `channels:` for this platform, allowing these people. */
  channel(people: Person[]): string;
  /** What `hob start` prints once this platform is up ("hob is running on slack as @hob, discord as @hob."). */
  ready: RegExp;
  /** The longest message: a long answer is split at it. */
  limit: number;
  person(index: number): Person;
  /** The person's chat with hob, as the outbox names it. */
  chatId(person: Person): string;
  ask(person: Person, text: string): Promise<void>;
  texts(person: Person): string[];
  /** The next message created in the person's chat gets a 429; its retry is carried out and its answer held back. */
  refuseThenHold(person: Person): Held;
  /** The edit that makes the person's live message `text` is held: before the platform carries it out, or after (its "ok" held back). */
  holdFinalEdit(person: Person, text: string, carriedOut: boolean): Held;
  /** The platform's clock moves on (Discord forgets nonces, Slack's timestamps move). */
  later(ms: number): void;
  /** More answers this platform leaves in the first start, before its kill. */
  leave?(answer: Answer): Promise<void>;
  /** After the first restart: those answers settled. */
  settled?(settledWith: (person: Person, expected: string[], what: string) => Promise<void>): Promise<void>;
  /** At the end: what else this platform must show. */
  check?(people: People): void;
};

/** A long answer in paragraphs: split in three or more parts. */
function longAnswer(limit: number): string {
  return Array.from({ length: 9 }, (_, n) => `Part ${n}: ${'steady words '.repeat(Math.ceil(limit / 40))}`.trim()).join('\n\n');
}

/** The fake model answers each question with its own scripts, in order: the answers of several chats are written at the same time. */
function answersByQuestion(model: FakeAnthropic): Answer {
  const scripts = new Map<string, AnthropicScript[]>();
  model.respondWith((request) => {
    const asked = JSON.stringify(request.body.messages);
    for (const [question, queue] of scripts) if (asked.includes(question)) return queue.shift();
    return undefined;
  });
  return (question, ...answers) => void scripts.set(question, answers);
}

function slackBed(fake: FakeSlack, model: FakeAnthropic): CrashBed {
  const inChat = (person: Person) => (params: Record<string, unknown>) => params.channel === dmOf(person.id);
  const texts = (person: Person) => fake.seen(dmOf(person.id)).map((message) => message.text);
  // Gus and Hal ask in assistant-pane threads (streams); Ivy starts a background task.
  const [gus, hal, ivy] = [fake.person({ id: 'UGUS6', name: 'Gus' }), fake.person({ id: 'UHAL7', name: 'Hal' }), fake.person({ id: 'UIVY8', name: 'Ivy' })];
  const task = 'count the files in the workspace';
  const taskRequests = () => model.requests.filter((request) => JSON.stringify(request.body.messages).includes(task));
  const taskDone = () => texts(ivy).filter((text) => text.startsWith('✅ Background task'));
  return {
    name: 'slack',
    channel: (people) => `slack: { bot_token: ${fake.botToken}, app_token: ${fake.appToken}, api_url: "${fake.apiUrl}", allow_from: [${[...people.map((person) => person.id), gus.id, hal.id, ivy.id].map((id) => `"${id}"`).join(', ')}] }`,
    ready: /hob is running on .*\bslack as @/,
    limit: 3000,
    person: (index) => fake.person({ id: `U${(NAMES[index] ?? 'X').toUpperCase()}${index}`, name: NAMES[index] ?? 'X' }),
    chatId: (person) => dmOf(person.id),
    ask: async (person, text) => void (await fake.dm(person, text)),
    texts,
    refuseThenHold: (person) => {
      fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 }, inChat(person));
      return fake.web.holdNext('chat.postMessage', { when: inChat(person) });
    },
    holdFinalEdit: (person, text, carriedOut) => fake.web.holdNext('chat.update', { when: (params) => inChat(person)(params) && JSON.stringify(params).includes(text), carriedOut }),
    later: (ms) => void (fake.web.clockOffsetMs += ms),
    leave: async (answer) => {
      // A stream whose answer was recorded; its end is still on its way.
      answer('slack: seventh question', { text: 'Streamed answer seven, complete.', chunks: 3, chunkDelayMs: 150 });
      const stop = fake.web.holdNext('chat.stopStream', { when: inChat(gus), carriedOut: false });
      await fake.assistantThreadStarted(gus, '1800000000.000100');
      await fake.dm(gus, 'slack: seventh question', { threadTs: '1800000000.000100' });
      // A stream cut off mid-way (appended to after it started), the model still writing: its
      // second chunk comes once the stream started with the first (the flush timer is late
      // on a loaded machine, and would start it with both).
      const streamStarted = () => fake.waitFor(() => fake.web.calls.some((call) => call.method === 'chat.startStream' && inChat(hal)(call.params)) || undefined, 20_000, 'stream eight started').catch(() => undefined);
      answer('slack: eighth question', { hang: true, text: 'A slow first stream of answer eight', chunks: 2, nextChunk: streamStarted }, { text: 'Streamed answer eight, whole.' });
      await fake.assistantThreadStarted(hal, '1800000000.000200');
      await fake.dm(hal, 'slack: eighth question', { threadTs: '1800000000.000200' });
      // A background task: its first turn looks at the workspace, its second is cut off by the
      // kill; after the restart it is resumed from its stored history, not started over.
      answer(task, { toolCalls: [{ id: 'toolu_glob', name: 'glob', input: { pattern: '*' } }] }, { hang: true }, { text: 'The workspace has no files.' });
      await fake.dm(ivy, `/bg ${task}`);
      await fake.waitFor(() => texts(ivy).find((text) => text.startsWith('Started background task t')), 20_000, 'the /bg answer');
      await fake.waitFor(() => taskRequests().length === 2 || undefined, 20_000, "the task's second turn");
      await stop.arrived;
      const appended = () => fake.web.calls.some((call) => call.method === 'chat.appendStream' && inChat(hal)(call.params));
      await fake.waitFor(() => appended() && JSON.stringify(texts(hal)) === '["A slow first stream of answer eight"]', 20_000, 'the cut-off stream of answer eight');
    },
    settled: async (settledWith) => {
      await settledWith(gus, ['Streamed answer seven, complete.'], 'answer seven, once');
      await settledWith(hal, ['Streamed answer eight, whole.'], 'answer eight, once, the cut-off stream gone');
      await fake.waitFor(() => taskDone().length > 0 || undefined, 20_000, 'the background task result');
      const [done] = taskDone();
      expect(done).toMatch(/Background task t[0-9a-f]{8} \("count the files in the workspace"\) is done/);
      expect(done).toContain('The workspace has no files.');
      // Resumed, not started over: the one request after the restart carries the glob call made before it.
      expect(taskRequests()).toHaveLength(3);
      expect(JSON.stringify(taskRequests()[2]?.body.messages)).toContain('toolu_glob');
    },
    check: () => {
      // The task's result once, though two more starts followed (the outbox was settled before each kill).
      expect(taskDone()).toHaveLength(1);
      expect(texts(gus)).toEqual(['Streamed answer seven, complete.']);
      expect(texts(hal)).toEqual(['Streamed answer eight, whole.']);
      expect(fake.web.messages.filter((message) => message.stream === 'streaming' && !message.deleted)).toEqual([]);
    },
  };
}

function discordBed(fake: FakeDiscord): CrashBed {
  const created = (person: Person) => new RegExp(`^POST /channels/${fake.dmChannelOf(person)}/messages$`);
  return {
    name: 'discord',
    channel: (people) => `discord: { token: "${fake.token}", api_url: ${fake.apiRoot}, allow_from: [${people.map((person) => `"${person.id}"`).join(', ')}] }`,
    ready: /hob is running on .*\bdiscord as @/,
    limit: 2000,
    person: (index) => ({ id: String(500 + index), name: NAMES[index] ?? 'X' }),
    chatId: (person) => fake.dmChannelOf(person),
    ask: async (person, text) => void fake.dm(person, text),
    texts: (person) => fake.botMessages(fake.dmChannelOf(person)).map((message) => message.content),
    refuseThenHold: (person) => {
      fake.rateLimitNext(created(person), 1);
      return fake.holdNext(created(person));
    },
    holdFinalEdit: (person, text, carriedOut) => fake.holdNext(new RegExp(`^PATCH /channels/${fake.dmChannelOf(person)}/messages/\\d+$`), { when: (body) => body.content === text, carriedOut }),
    later: (ms) => void (fake.clockOffsetMs += ms),
    // The live message became the first part of the split answer: nothing was posted and deleted again.
    check: (people) => expect(fake.restCalls('DELETE', new RegExp(`/channels/${fake.dmChannelOf(people[5])}/`))).toEqual([]),
  };
}

describe('hob start killed while it delivers', () => {
  it('Slack and Discord: each answer is in the chat once and whole after every kill (a 429 then a kill minutes before the restart, a split answer, each step of a live answer and of a Slack stream), and a background task cut off by a kill is resumed and its result delivered once', async ({ onTestFinished }) => {
    const processes: HobProcess[] = [];
    const [model, slack, discord] = await Promise.all([startFakeAnthropic(), startFakeSlack(), startFakeDiscord()]);
    onTestFinished(async () => {
      for (const hob of processes) hob.kill();
      await Promise.all([slack.close(), discord.close()].map((closing) => closing.catch(() => undefined)));
      await model.close();
    });
    // Discord last: its third answer is the one the fault kills the first start on.
    const beds = [slackBed(slack, model), discordBed(discord)];
    const chats = beds.map((bed) => ({ bed, people: NAMES.map((_, index) => bed.person(index)) as People }));
    const dir = tempDir('hob-crash-');
    const config = writeConfig(
      dir,
      `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
gateway: { busy_after_ms: 0 }
channels:
  console: { enabled: false }
${chats.map(({ bed, people }) => `  ${bed.channel(people)}`).join('\n')}
`,
    );
    const answer = answersByQuestion(model);
    const started = async (fault?: string) => {
      const hob = spawnHob(['--config', config, 'start'], cleanEnv(fault ? { HOB_FAULT: `delivery:${fault}` } : {}));
      processes.push(hob);
      for (const bed of beds) await hob.waitFor(bed.ready, 20_000);
      return hob;
    };
    const waitFor = async (bed: CrashBed, person: Person, probe: () => boolean, what: string, settled = true) => {
      for (let waited = 0; waited < 20_000; waited += 20) {
        // The chat first (in memory); the outbox (a database opened anew, ~1 ms of CPU) only then.
        if (probe() && (!settled || unsettled(dir) === 0)) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`timed out waiting for ${what} on ${bed.name}; chat: ${JSON.stringify(bed.texts(person))}; unsettled: ${unsettled(dir)}; output: ${processes.at(-1)?.output().slice(-2000)}`);
    };
    const settledWith = (bed: CrashBed) => (person: Person, expected: string[], what: string) => waitFor(bed, person, () => JSON.stringify(bed.texts(person)) === JSON.stringify(expected), what);
    /** The person's live message shows `text` and hob recorded it: the state a kill right then leaves. */
    const liveShows = (bed: CrashBed, person: Person, text: string, what: string) =>
      waitFor(bed, person, () => JSON.stringify(bed.texts(person)) === JSON.stringify([text]) && liveMessageRecorded(dir, bed.chatId(person)), what, false);
    const onBoth = (step: (chat: (typeof chats)[number]) => Promise<void>) => Promise.all(chats.map(step));

    // 1. One start, killed with an answer left at each step of a live answer.
    let hob = await started('live-finished');
    const held: Held[] = [];
    await onBoth(async ({ bed, people: [ann, bob, cid, dan, eve] }) => {
      const q = (what: string) => `${bed.name}: ${what} question`;
      //  a. The live message's create gets a 429; the platform takes the retry, hob never hears
      //     back. Minutes later the restart finds the message (metadata, or text).
      answer(q('first'), { text: 'Answer one, complete.', chunks: 3, chunkDelayMs: 150 });
      held.push(bed.refuseThenHold(ann));
      await bed.ask(ann, q('first'));
      //  b. The answer recorded, the live message never became it: its edit is still on its way.
      answer(q('second'), { text: 'Answer two, complete.', chunks: 3, chunkDelayMs: 150 });
      held.push(bed.holdFinalEdit(bob, 'Answer two, complete.', false));
      await bed.ask(bob, q('second'));
      //  c. The live message created and recorded, the model still writing: the restart
      //     removes the cut-off text and the resumed run answers.
      answer(q('fourth'), { hang: true, text: 'A slow first try at answer four' }, { text: 'Answer four, whole.' });
      await bed.ask(dan, q('fourth'));
      //  d. The live message edited mid-way (past the platform's edit interval, 1.2 s), the
      //     model still writing.
      answer(q('fifth'), { hang: true, text: 'A slow first try at answer five', chunks: 2, chunkDelayMs: 1300 }, { text: 'Answer five, whole.' });
      await bed.ask(eve, q('fifth'));
      //  e. The platform finished the live answer; hob never heard back, so no outbox mark.
      //     (On the last platform the fault does this, below.)
      answer(q('third'), { text: 'Answer three, complete.', chunks: 3, chunkDelayMs: 150 });
      if (bed !== beds.at(-1)) {
        held.push(bed.holdFinalEdit(cid, 'Answer three, complete.', true));
        await bed.ask(cid, q('third'));
      }
      await bed.leave?.(answer);
      await liveShows(bed, dan, 'A slow first try at answer four', 'the cut-off live message of answer four');
      await liveShows(bed, eve, 'A slow first try at answer five', 'the edited cut-off live message of answer five');
    });
    await Promise.all(held.map((hold) => hold.arrived));
    const last = chats.at(-1) as (typeof chats)[number];
    await last.bed.ask(last.people[2], `${last.bed.name}: third question`);
    await hob.exited;
    for (const { bed, people } of chats) {
      expect(bed.texts(people[2])).toEqual(['Answer three, complete.']);
      bed.later(5 * MINUTES);
    }

    // 2. The restart settles each of them. Then a split answer: its live message becomes the
    //    first part; the second part's create gets a 429, the platform takes the retry, kill.
    hob = await started();
    const longs = new Map(beds.map((bed) => [bed, longAnswer(bed.limit)]));
    await onBoth(async ({ bed, people: [ann, bob, cid, dan, eve] }) => {
      const settled = settledWith(bed);
      await settled(ann, ['Answer one, complete.'], 'answer one, once');
      await settled(bob, ['Answer two, complete.'], 'answer two, once');
      await settled(cid, ['Answer three, complete.'], 'answer three, once');
      await settled(dan, ['Answer four, whole.'], 'answer four, once, the cut-off try gone');
      await settled(eve, ['Answer five, whole.'], 'answer five, once, the cut-off try gone');
      await bed.settled?.(settled);
    });
    // The split answers only once both platforms are settled: a held part keeps the outbox
    // unsettled until the kill, and each wait above is for a settled outbox.
    await onBoth(async ({ bed, people: [, , , , , fay] }) => {
      answer(`${bed.name}: a long answer please`, { text: longs.get(bed) as string, chunks: 6, chunkDelayMs: 200 });
      await bed.ask(fay, `${bed.name}: a long answer please`);
      await waitFor(bed, fay, () => bed.texts(fay).length === 1, 'the live message', false);
      await bed.refuseThenHold(fay).arrived;
    });
    hob.kill();
    await hob.exited;
    for (const { bed } of chats) bed.later(5 * MINUTES);

    // 3. The restart sends the rest of the split answers (whole messages), each part once.
    hob = await started();
    await onBoth(async ({ bed, people }) => {
      const fay = people[5];
      await waitFor(bed, fay, () => bed.texts(fay).join('\n\n') === longs.get(bed), 'the long answer, each part once');
      expect(bed.texts(fay).length).toBeGreaterThan(2);
      for (const person of people.slice(0, 5)) expect(bed.texts(person)).toHaveLength(1);
      bed.check?.(people);
    });
    hob.child.kill('SIGTERM');
    expect(await hob.exited).toBe(0);
  }, 180_000);
});
