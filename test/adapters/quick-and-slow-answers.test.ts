import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import type { ChannelAdapter } from '../../src/gateway/channel.js';
import { BUSY_AFTER_MS } from '../../src/gateway/slow-run.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { defineTool, type AnyTool } from '../../src/tools/tool.js';
import { dmOf, startFakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { discordBed } from '../support/discord-testbed.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';

/**
 * With hob's own delay before it shows that it is busy (not the tests' usual 0): a quick
 * answer is one message and no other platform call that changes what the person sees; a run
 * that takes long, or calls a tool, still shows the busy sign, the answer while it is written
 * and the progress message. Read from each fake's record of the calls hob made.
 */

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** One platform's fake with the real adapter, as a person in a DM with hob sees it. */
type Bed = {
  adapter: ChannelAdapter;
  dm(text: string): Promise<void>;
  /** hob's messages in the DM as they read now. */
  seen(): string[];
  /** Calls hob made since the DM that change what people see (reads and polling left out), in order. */
  visibleCalls(): string[];
  /** The one call that puts a message in the DM. */
  messageCall: string;
  /** Whether hob showed its busy sign since the DM (typing, or Slack's 👀). */
  busyShown(): boolean;
  /** The busy sign is still up (Slack's reaction stays until the answer is out). */
  busyStaying(): boolean;
  /** What a live answer shows now (Telegram's draft, Discord's edited message); undefined where the DM has none. */
  liveText(): string | undefined;
  waitFor<T>(probe: () => T | undefined | null | false, what: string): Promise<T>;
  close(): Promise<void>;
};

async function telegramBed(): Promise<Bed> {
  const fake = await startFakeTelegram({ botUsername: 'hob_bot' });
  const adapter = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, draftIntervalMs: 50, logger: quiet });
  const chat = Number(OWNER.id);
  let from = 0;
  const since = () => fake.calls.slice(from).map((call) => call.method).filter((method) => !['getUpdates', 'getMe', 'getFile'].includes(method));
  return {
    adapter,
    dm: async (text) => {
      from = fake.calls.length;
      fake.sendText({ id: chat, first_name: OWNER.name }, { id: chat, type: 'private' }, text);
    },
    seen: () => fake.chat(chat).filter((message) => !message.deleted).map((message) => message.text),
    visibleCalls: since,
    messageCall: 'sendMessage',
    busyShown: () => since().includes('sendChatAction'),
    busyStaying: () => false,
    liveText: () => fake.draft(chat)?.text,
    waitFor: (probe, what) => fake.waitFor(probe, 8000, what),
    close: () => fake.close(),
  };
}

async function slackBed(): Promise<Bed> {
  const fake = await startFakeSlack();
  const person = fake.person({ ...OWNER });
  const adapter = slackAdapter(fake);
  let from = 0;
  const reads = ['users.info', 'conversations.info', 'conversations.replies', 'auth.test', 'apps.connections.open'];
  const since = () => fake.web.calls.slice(from).map((call) => call.method).filter((method) => !reads.includes(method));
  return {
    adapter,
    dm: async (text) => {
      from = fake.web.calls.length;
      await fake.dm(person, text);
    },
    seen: () => fake.seen(dmOf(person.id)).map((message) => message.text),
    visibleCalls: since,
    messageCall: 'chat.postMessage',
    busyShown: () => fake.web.reactions.some((reaction) => reaction.name === 'eyes'),
    busyStaying: () => fake.web.reactions.some((reaction) => reaction.name === 'eyes' && !reaction.removed),
    // Slack streams into threads only; a top-level DM shows the 👀 reaction instead.
    liveText: () => undefined,
    waitFor: (probe, what) => fake.waitFor(probe, 8000, what),
    close: () => fake.close(),
  };
}

async function discordTestBed(): Promise<Bed> {
  const bed = await discordBed();
  const { fake } = bed;
  const channel = fake.dmChannelOf(OWNER);
  let from = 0;
  const since = () => fake.calls.slice(from).filter((call) => call.method !== 'GET').map((call) => `${call.method} ${call.path.replace(/\/\d{15,}$/, '/:id')}`);
  return {
    adapter: bed.adapter,
    dm: async (text) => {
      from = fake.calls.length;
      fake.dm(OWNER, text);
    },
    seen: () => fake.botMessages(channel).map((message) => message.content),
    visibleCalls: since,
    messageCall: `POST /channels/${channel}/messages`,
    busyShown: () => since().includes(`POST /channels/${channel}/typing`),
    busyStaying: () => false,
    liveText: () => fake.botMessages(channel).at(-1)?.content,
    waitFor: (probe, what) => fake.waitFor(probe, 8000, what),
    close: () => bed.close(),
  };
}

const lookupTool = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  input: z.object({ what: z.string() }),
  readOnly: true,
  run: async ({ what }) => ({ content: `found ${what}` }),
}) as unknown as AnyTool;

const beds: [string, () => Promise<Bed>][] = [
  ['telegram', telegramBed],
  ['slack', slackBed],
  ['discord', discordTestBed],
];

describe.each(beds)('%s: what a person sees while hob answers', (platform, makeBed) => {
  let bed: Bed | undefined;
  let hob: TestGateway | undefined;

  afterEach(async () => {
    await hob?.close();
    await bed?.close();
    hob = undefined;
    bed = undefined;
  });

  async function start(model: ScriptedModel): Promise<{ bed: Bed; hob: TestGateway }> {
    bed = await makeBed();
    hob = await startTestGateway(bed.adapter, model, { busyAfterMs: BUSY_AFTER_MS, tools: [lookupTool] });
    return { bed, hob };
  }

  /** The answer is out, nothing is left to send and no run is busy: what the person sees now stays. */
  async function settled(current: Bed, test: TestGateway, answer: string): Promise<void> {
    const outbox = new SqliteOutbox(test.db);
    await current.waitFor(() => current.seen().some((text) => text.includes(answer)) && outbox.counts().pending === 0 && !test.gateway.pool.all().some((conversation) => conversation.busy), 'the answer, settled');
  }

  it('a quick answer is one message and nothing else: no busy sign, no live preview', async () => {
    const { bed, hob } = await start(new ScriptedModel([{ text: 'Quick answer, right away.' }]));
    await bed.dm('hi');
    await settled(bed, hob, 'Quick answer, right away.');
    expect(bed.seen()).toEqual(['Quick answer, right away.']);
    expect(bed.visibleCalls()).toEqual([bed.messageCall]);
    expect(bed.busyShown()).toBe(false);
  });

  it('a slow answer shows the busy sign, and the answer while it is written where the DM can', async () => {
    let resume: () => void = () => undefined;
    const answer = 'Thinking it over slowly, and here it is.';
    const { bed, hob } = await start(new ScriptedModel([{ text: answer, pauseAt: 20, resume: new Promise<void>((resolve) => (resume = resolve)) }]));
    await bed.dm('a hard one');
    await bed.waitFor(() => bed.busyShown(), 'the busy sign');
    if (platform !== 'slack') await bed.waitFor(() => bed.liveText()?.includes('Thinking it over'), 'the answer while it is written');
    resume();
    await settled(bed, hob, answer);
    expect(bed.seen().filter((text) => text === answer)).toHaveLength(1);
    await bed.waitFor(() => !bed.busyStaying(), 'the busy sign to go once the answer is out');
  });

  it('a tool call shows the busy sign and the progress message at once', async () => {
    const { bed, hob } = await start(new ScriptedModel([{ toolCalls: [{ name: 'lookup', input: { what: 'the weather' } }] }, { text: 'It is sunny.' }]));
    await bed.dm('weather?');
    await settled(bed, hob, 'It is sunny.');
    expect(bed.busyShown()).toBe(true);
    expect(bed.seen()).toHaveLength(2);
    expect(bed.seen()).toEqual(expect.arrayContaining([expect.stringContaining('✅ lookup'), 'It is sunny.']));
  });
});
