import '../support/env.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/gateway/commands.js';
import { askUserTool } from '../../src/tools/ask-user.js';
import type { GatewayOptions } from '../../src/gateway/gateway.js';
import type { ProviderClient, ProviderRequest } from '../../src/providers/types.js';
import type { AnyTool } from '../../src/tools/tool.js';
import { BOT_ID, BOT_ROLE_ID, GENERAL_ID, GUILD_ID, type FakeDiscord } from '../fakes/discord/index.js';
import { TINY_PNG } from '../fakes/telegram/index.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';
import { systemClock } from '../../src/core/clock.js';
import { createScheduling } from '../../src/scheduler/index.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';
import { makeContext } from '../tools/tool-harness.js';
import { SETTINGS } from '../scheduler/harness.js';
import { FRIEND, OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { migratedDbFile } from '../support/migrated-db.js';

let bed: DiscordBed | undefined;
let hob: TestGateway | undefined;

afterEach(async () => {
  await hob?.close();
  await bed?.close();
  hob = undefined;
  bed = undefined;
});

async function start(model: ProviderClient, options: Partial<GatewayOptions> & { tools?: AnyTool[]; dir?: string } = {}, bedOptions: Parameters<typeof discordBed> = []): Promise<{ fake: FakeDiscord; hob: TestGateway; bed: DiscordBed }> {
  bed = await discordBed(...bedOptions);
  hob = await startTestGateway(bed.adapter, model, options);
  return { fake: bed.fake, hob, bed };
}

const texts = (fake: FakeDiscord, channelId: string) => fake.botMessages(channelId).map((message) => message.content);
const mention = `<@${BOT_ID}>`;

describe('discord: where people talk', () => {
  it('answers a DM from someone whose DM channel discord.js has never seen (the partial channel)', async () => {
    const { fake } = await start(new ScriptedModel([{ text: 'Hi Ann.' }]));
    const channel = fake.dmChannelOf(OWNER);
    fake.dm(OWNER, 'hello');
    await fake.waitFor(() => texts(fake, channel).includes('Hi Ann.'), 8000, 'the DM answer');
    // The IDENTIFY asked for DMs and message content: Guilds | GuildMessages | DirectMessages | MessageContent.
    expect((fake.gateway.identifies()[0]?.d as { intents: number }).intents).toBe(1 | 512 | 4096 | 32768);
  });

  it('in a server channel answers a mention or a reply to hob, as a reply, and nothing else', async () => {
    const model = new ScriptedModel([{ text: 'Answer one' }, { text: 'Answer two' }]);
    const { fake } = await start(model);
    fake.say(FRIEND, GENERAL_ID, 'just chatting');
    const asked = fake.say(FRIEND, GENERAL_ID, `${mention} what is 2+2?`);
    const first = await fake.waitFor(() => fake.botMessages(GENERAL_ID).find((message) => message.content === 'Answer one'), 8000, 'the first answer');
    expect(first.replyTo).toBe(asked);
    fake.say(FRIEND, GENERAL_ID, 'and 3+3?', { replyTo: first.id });
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('Answer two'), 8000, 'the answer to the reply');
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('[Bob] what is 2+2?');
    expect(JSON.stringify(model.requests[0]?.messages)).not.toContain(BOT_ID);
  });

  it("counts a mention of hob's own role as a mention of hob", async () => {
    const model = new ScriptedModel([{ text: 'You rang?' }]);
    const { fake } = await start(model);
    fake.say(FRIEND, GENERAL_ID, `<@&${BOT_ROLE_ID}> are you there?`);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('You rang?'), 8000, 'the answer');
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('[Bob] are you there?');
  });

  it('gives each person in a server channel their own conversation', async () => {
    const model = new ScriptedModel([{ text: 'for Bob' }, { text: 'for Ann' }]);
    const { fake, hob } = await start(model);
    fake.say(FRIEND, GENERAL_ID, `${mention} my secret is 42`);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('for Bob'), 8000, "Bob's answer");
    fake.say(OWNER, GENERAL_ID, `${mention} what did Bob say?`);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('for Ann'), 8000, "Ann's answer");
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('secret');
    expect(hob.gateway.pool.all().map((conversation) => conversation.key).sort()).toEqual([`discord:${GENERAL_ID}:u${OWNER.id}`, `discord:${GENERAL_ID}:u${FRIEND.id}`]);
  });

  it('answers an edited message as a correction, but not a link preview or a late edit', async () => {
    const model = new ScriptedModel([{ text: 'Paris.' }, { text: 'Rome.' }]);
    const { fake } = await start(model, { busyMode: 'queue' });
    const channel = fake.dmChannelOf(OWNER);
    const asked = fake.dm(OWNER, 'capital of France?');
    await fake.waitFor(() => texts(fake, channel).includes('Paris.'), 8000, 'the first answer');
    fake.edit(asked); // Discord adds a link preview: no edit time
    fake.edit(asked, 'capital of Italy?', 30);
    await fake.waitFor(() => texts(fake, channel).includes('Rome.'), 8000, 'the answer to the edit');
    fake.edit(asked, 'capital of Spain?', 3600);
    fake.dm(OWNER, 'thanks');
    await fake.waitFor(() => model.requests.length === 3, 8000, 'the next message');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('[Edited: this replaces what they wrote before; answer the corrected version] capital of Italy?');
    expect(JSON.stringify(model.requests.map((request) => request.messages))).not.toContain('Spain');
  });

  it('ignores bots, itself included', async () => {
    const model = new ScriptedModel([{ text: 'for Bob' }]);
    const { fake } = await start(model);
    fake.say({ id: '900', name: 'OtherBot', bot: true }, GENERAL_ID, `${mention} obey me`);
    fake.say({ id: BOT_ID, name: 'hob', bot: true }, GENERAL_ID, `${mention} talking to myself`);
    fake.say(FRIEND, GENERAL_ID, `${mention} hi`);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('for Bob'), 8000, 'the answer to Bob');
    expect(model.requests).toHaveLength(1);
  });

  it('keeps each thread one conversation for everyone in it, answered inside the thread, each message framed with who wrote it', async () => {
    const model = new ScriptedModel([{ text: 'thread answer for Bob' }, { text: 'thread answer for Ann' }]);
    const { fake, hob } = await start(model);
    const thread = fake.createThread('planning');
    fake.say(FRIEND, thread, `${mention} plan the trip`);
    await fake.waitFor(() => texts(fake, thread).includes('thread answer for Bob'), 8000, 'the answer in the thread');
    fake.say(OWNER, thread, `${mention} and mine`);
    await fake.waitFor(() => texts(fake, thread).includes('thread answer for Ann'), 8000, "Ann's answer in the thread");
    expect(texts(fake, GENERAL_ID)).toEqual([]);
    expect(hob.gateway.pool.all().map((conversation) => conversation.key)).toEqual([`discord:${GENERAL_ID}:${thread}`]);
    // The thread's history is shared, and the model knows who wrote what.
    const seen = JSON.stringify(model.requests[1]?.messages);
    expect(seen).toContain('plan the trip');
    expect(seen).toMatch(/\[[^\]]+\] and mine/);
  });

  it('lets everyone in an allowed guild talk to it when they mention it, but not in DMs', async () => {
    const model = new ScriptedModel([{ text: 'Hello Eve' }]);
    const { fake } = await start(model, {
      access: new Map([['discord', { allowFrom: [OWNER.id], allowedGroups: [GUILD_ID] }]]),
    });
    fake.say(STRANGER, GENERAL_ID, `${mention} hi`);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('Hello Eve'), 8000, 'the answer to Eve');
    fake.dm(STRANGER, 'hi in private');
    await fake.waitFor(() => texts(fake, fake.dmChannelOf(STRANGER)).some((text) => text.includes('pairing code')), 8000, 'a pairing code');
    expect(model.requests).toHaveLength(1);
  });
});

describe('discord: approvals as buttons', () => {
  it('acknowledges every press at once, tells a foreign presser privately, and a replayed press changes nothing', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] }, { text: 'Ran it.' }]);
    const { fake } = await start(model);
    fake.say(FRIEND, GENERAL_ID, `${mention} run echo`);
    const prompt = await fake.waitFor(() => fake.botMessages(GENERAL_ID).find((message) => message.content.includes('echo hi')), 8000, 'the approval prompt');
    const allow = prompt.buttons.flat().find((button) => button.label === 'Allow once');
    expect(allow?.customId).toMatch(/^ap:a[0-9a-f]+:o$/);
    const foreign = fake.press(STRANGER, prompt.id, allow?.customId as string);
    await fake.waitFor(() => fake.noticesFor(STRANGER).some((notice) => notice.includes('not yours')), 8000, 'the not-yours notice');
    expect(fake.acksOf(foreign)).toEqual([6]);
    expect(fake.botMessages(GENERAL_ID).find((message) => message.id === prompt.id)?.buttons.flat()).toHaveLength(3);

    const own = fake.press(FRIEND, prompt.id, allow?.customId as string);
    await fake.waitFor(() => texts(fake, GENERAL_ID).includes('Ran it.'), 8000, 'the answer after approval');
    expect(fake.acksOf(own)).toEqual([6]);
    const closed = fake.botMessages(GENERAL_ID).find((message) => message.id === prompt.id);
    expect(closed?.content).toContain('allowed once by Bob');
    expect(closed?.buttons).toEqual([]);

    // A stale client presses the old button again, and the same dispatch arrives twice.
    const again = fake.press(FRIEND, prompt.id, allow?.customId as string);
    await fake.waitFor(() => fake.noticesFor(FRIEND).some((notice) => notice.includes('already closed')), 8000, 'the already-closed notice');
    fake.replayInteraction(own);
    fake.say(FRIEND, GENERAL_ID, `${mention} ping`);
    await fake.waitFor(() => model.requests.length === 3, 8000, 'the next model call');
    expect(fake.acksOf(again)).toEqual([6]);
    expect(fake.acksOf(own)).toEqual([6]);
    expect(fake.calls.filter((call) => call.status === 400)).toEqual([]);
    expect(model.requests).toHaveLength(3);
  });

  it('asks ask_user questions with a button per option', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'ask_user', input: { question: 'Which colour?', options: ['red', 'blue'] } }] }, { text: 'Blue it is.' }]);
    const { fake } = await start(model, { tools: [askUserTool] });
    fake.dm(OWNER, 'paint it');
    const channel = fake.dmChannelOf(OWNER);
    const question = await fake.waitFor(() => fake.botMessages(channel).find((message) => message.content.includes('Which colour?')), 8000, 'the question');
    const blue = question.buttons.flat().find((button) => button.label === 'blue');
    fake.press(OWNER, question.id, blue?.customId as string);
    await fake.waitFor(() => texts(fake, channel).includes('Blue it is.'), 8000, 'the answer');
    expect(fake.botMessages(channel).find((message) => message.id === question.id)?.buttons).toEqual([]);
  });
});

describe('discord: application commands', () => {
  it('registers every hob command at start, per allowed guild and globally for DMs', async () => {
    const { fake } = await start(new ScriptedModel([]), {}, [{}, { allowedGuilds: [GUILD_ID] }]);
    await fake.waitFor(() => fake.commands.has(GUILD_ID) && fake.commands.has('global'), 8000, 'the command registrations');
    const names = (list: Record<string, unknown>[] | undefined) => (list ?? []).map((command) => command.name);
    expect(names(fake.commands.get(GUILD_ID))).toEqual(COMMANDS.map((entry) => entry.command));
    expect(names(fake.commands.get('global'))).toEqual(COMMANDS.map((entry) => entry.command));
    expect(fake.commands.get('global')?.[0]?.contexts).toEqual([1]);
    expect(fake.commands.get(GUILD_ID)?.[0]?.contexts).toEqual([0]);
  });

  it('registers at most the 100 commands Discord takes, hob’s own first, when plugins bring more', async () => {
    const { fake, bed } = await start(new ScriptedModel([]));
    await fake.waitFor(() => fake.commands.has('global'), 8000, 'the first registration');
    const plugins = Array.from({ length: 90 }, (_, index) => ({ command: `plugin_${index}`, description: `Plugin command ${index}` }));
    await bed.adapter.setCommands?.([...COMMANDS, ...plugins]);
    const names = (fake.commands.get('global') ?? []).map((command) => command.name);
    expect(names).toHaveLength(100);
    expect(names.slice(0, COMMANDS.length)).toEqual(COMMANDS.map((entry) => entry.command));
    expect(fake.calls.filter((call) => call.status === 400)).toEqual([]);
  });

  it('answers a command privately to whoever used it, and refuses owner-only commands privately', async () => {
    const { fake } = await start(new ScriptedModel([]));
    const status = fake.slash(FRIEND, GENERAL_ID, 'status');
    await fake.waitFor(() => fake.noticesFor(FRIEND).find((notice) => notice.includes('Model: scripted-model')), 8000, 'the private /status answer');
    expect(fake.acksOf(status)).toEqual([5]);
    fake.slash(FRIEND, GENERAL_ID, 'model', 'gpt-9');
    await fake.waitFor(() => fake.noticesFor(FRIEND).find((notice) => notice.includes('only for the owner')), 8000, 'the private refusal');
    fake.slash(OWNER, fake.dmChannelOf(OWNER), 'model', 'gpt-9');
    await fake.waitFor(() => fake.noticesFor(OWNER).find((notice) => notice.includes('Switched to gpt-9')), 8000, "the owner's answer");
    expect(texts(fake, GENERAL_ID)).toEqual([]);
    expect(texts(fake, fake.dmChannelOf(OWNER))).toEqual([]);
  });

  it('applies a command used inside a thread to the thread’s shared conversation', async () => {
    const { fake, hob } = await start(new ScriptedModel([{ text: 'thread answer' }]));
    const thread = fake.createThread('planning');
    fake.say(FRIEND, thread, `${mention} plan the trip`);
    await fake.waitFor(() => texts(fake, thread).includes('thread answer'), 8000, 'the answer in the thread');
    fake.slash(OWNER, thread, 'status');
    await fake.waitFor(() => fake.noticesFor(OWNER).find((notice) => notice.includes('Model: scripted-model')), 8000, 'the private /status answer');
    expect(hob.gateway.pool.all().map((conversation) => conversation.key)).toEqual([`discord:${GENERAL_ID}:${thread}`]);
  });

  it('answers /jobs in a server channel privately, and posts nothing in the channel', async () => {
    const dir = tempDir('hob-discord-jobs-');
    const scheduling = createScheduling({ store: openSqliteStore(migratedDbFile(join(dir, 'hob.db')), { clock: systemClock }), clock: systemClock, defaultTimezone: 'Europe/Berlin', settings: SETTINGS });
    const create = scheduling.tools.find((tool) => tool.name === 'schedule_create') as AnyTool;
    await create.run(create.input.parse({ kind: 'reminder', text: 'call the dentist', in: '2h' }), { ...makeContext(dir), sessionKey: `discord:${GENERAL_ID}:u${FRIEND.id}`, userId: FRIEND.id });
    const { fake } = await start(new ScriptedModel([]), { dir, jobs: scheduling.access });
    fake.slash(FRIEND, GENERAL_ID, 'jobs');
    await fake.waitFor(() => fake.noticesFor(FRIEND).find((notice) => notice.includes('call the dentist')), 8000, 'the private /jobs answer');
    expect(fake.noticesFor(FRIEND).join('\n')).toContain('send /jobs to me in a private chat');
    expect(texts(fake, GENERAL_ID)).toEqual([]);
  });

  it('runs a command once when its interaction is dispatched twice', async () => {
    const { fake } = await start(new ScriptedModel([]));
    const used = fake.slash(FRIEND, GENERAL_ID, 'usage');
    await fake.waitFor(() => fake.noticesFor(FRIEND).length === 1, 8000, 'the /usage answer');
    fake.replayInteraction(used);
    fake.slash(FRIEND, GENERAL_ID, 'status');
    await fake.waitFor(() => fake.noticesFor(FRIEND).length === 2, 8000, 'the /status answer');
    expect(fake.noticesFor(FRIEND).filter((notice) => notice.startsWith('Requests:'))).toHaveLength(1);
    expect(fake.calls.filter((call) => call.status === 400)).toEqual([]);
  });

  it('removes the private placeholder when hob does not answer someone (a stranger in a server channel)', async () => {
    const { fake } = await start(new ScriptedModel([]), {}, [{}, { commandSilenceMs: 100 }]);
    fake.slash(STRANGER, GENERAL_ID, 'status');
    await fake.waitFor(() => fake.restCalls('DELETE', /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/).length === 1, 8000, 'the placeholder removed');
    expect(fake.noticesFor(STRANGER)).toEqual([]);
    expect(texts(fake, GENERAL_ID)).toEqual([]);
  });
});

describe('discord: output', () => {
  it('posts an answer containing @everyone, a role and a user mention that pings no one', async () => {
    const answer = `@everyone look! <@&${GUILD_ID}> and <@${FRIEND.id}> @here`;
    const { fake } = await start(new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'true' } }] }, { text: answer }]));
    fake.say(FRIEND, GENERAL_ID, `${mention} announce it`);
    const prompt = await fake.waitFor(() => fake.botMessages(GENERAL_ID).find((message) => message.buttons.length > 0), 8000, 'the prompt');
    fake.press(FRIEND, prompt.id, prompt.buttons.flat()[0]?.customId as string);
    const sent = await fake.waitFor(() => fake.botMessages(GENERAL_ID).find((message) => message.content === answer), 8000, 'the answer');
    expect(sent.pinged).toEqual([]);
    const writes = fake.calls.filter((call) => /^\/(channels\/\d+\/messages|webhooks\/)/.test(call.path) && (call.method === 'POST' || call.method === 'PATCH'));
    expect(writes.length).toBeGreaterThan(2);
    for (const call of writes) expect(call.body.allowed_mentions).toMatchObject({ parse: [] });
  });

  it('splits a long answer at 2,000 characters without breaking its code block', async () => {
    const code = Array.from({ length: 120 }, (_, index) => `const value${index} = ${index}; // ${'x'.repeat(20)}`).join('\n');
    const { fake } = await start(new ScriptedModel([{ text: `Here:\n\n\`\`\`ts\n${code}\n\`\`\`` }]));
    fake.dm(OWNER, 'write code');
    const channel = fake.dmChannelOf(OWNER);
    await fake.waitFor(() => texts(fake, channel).some((text) => text.includes('const value119')), 8000, 'the last part');
    const parts = texts(fake, channel);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2000);
      expect((part.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(parts.slice(1).every((part) => part.startsWith('```ts'))).toBe(true);
  });

  it('shows typing while busy and waits out a 429 without losing or doubling the answer', async () => {
    const { fake } = await start(new ScriptedModel([{ text: 'after the wait' }]));
    fake.rateLimitNext(/^POST \/channels\/\d+\/messages$/, 0.2);
    fake.dm(OWNER, 'hi');
    const channel = fake.dmChannelOf(OWNER);
    await fake.waitFor(() => texts(fake, channel).includes('after the wait'), 8000, 'the answer');
    expect(fake.calls.some((call) => call.status === 429)).toBe(true);
    expect(texts(fake, channel)).toEqual(['after the wait']);
    expect(fake.restCalls('POST', new RegExp(`^/channels/${channel}/typing$`)).length).toBeGreaterThan(0);
  });

  it('gives the model an attached image and saves a document into workspace/inbox', async () => {
    const model = new ScriptedModel([{ text: 'Nice picture.' }, { text: 'Got the notes.' }]);
    const { fake, hob } = await start(model, { busyMode: 'queue' });
    const channel = fake.dmChannelOf(OWNER);
    fake.say(OWNER, channel, 'look', { files: [{ name: 'cat.png', bytes: TINY_PNG, contentType: 'image/png' }] });
    await fake.waitFor(() => texts(fake, channel).includes('Nice picture.'), 8000, 'the picture answer');
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('"type":"image"');
    fake.say(OWNER, channel, 'notes', { files: [{ name: 'notes.txt', bytes: Buffer.from('buy milk'), contentType: 'text/plain' }] });
    await fake.waitFor(() => texts(fake, channel).includes('Got the notes.'), 8000, 'the notes answer');
    const inbox = readdirSync(join(hob.dir, 'workspace', 'inbox'));
    expect(inbox.some((name) => name.endsWith('notes.txt'))).toBe(true);
    expect(readFileSync(join(hob.dir, 'workspace', 'inbox', inbox.find((name) => name.endsWith('notes.txt')) as string), 'utf8')).toBe('buy milk');
  });

  it('edits a message before it starts (a restart closes old approval prompts first)', async () => {
    bed = await discordBed();
    const channel = bed.fake.dmChannelOf(OWNER);
    const before = await bed.adapter.send({ chatId: channel }, { text: 'Allow?', buttons: [[{ label: 'Allow once', data: 'ap:a1:o' }]] });
    await bed.adapter.edit(before, { text: 'cancelled (hob restarted)' });
    expect(bed.fake.botMessages(channel).map((message) => [message.content, message.buttons])).toEqual([['cancelled (hob restarted)', []]]);
  });

  it('uploads a file hob sends', async () => {
    const { fake, bed } = await start(new ScriptedModel([]));
    const channel = fake.dmChannelOf(OWNER);
    const ref = await bed.adapter.send({ chatId: channel }, { text: 'the report', file: { name: 'report.csv', data: Buffer.from('a,b\n1,2\n') } });
    const sent = fake.botMessages(channel).find((message) => message.id === ref.messageId);
    expect(sent?.content).toBe('the report');
    expect(sent?.attachments.map((file) => [file.name, file.bytes.toString()])).toEqual([['report.csv', 'a,b\n1,2\n']]);
  });

  it('uploads a file also when the Slack adapter runs in the same hob (its undici is then the process\'s HTTP dispatcher)', async () => {
    const before = getGlobalDispatcher();
    // What loading Slack's Socket Mode does: undici 7 makes an Agent of its own the process's dispatcher.
    const slacks = new Agent();
    setGlobalDispatcher(slacks);
    try {
      const { fake, bed } = await start(new ScriptedModel([]));
      const channel = fake.dmChannelOf(OWNER);
      const ref = await bed.adapter.send({ chatId: channel }, { text: 'the report', file: { name: 'report.csv', data: Buffer.from('a,b\n1,2\n') } });
      const sent = fake.botMessages(channel).find((message) => message.id === ref.messageId);
      expect(sent?.attachments.map((file) => [file.name, file.bytes.toString()])).toEqual([['report.csv', 'a,b\n1,2\n']]);
    } finally {
      setGlobalDispatcher(before);
      await slacks.close();
    }
  });
});

describe('discord: split messages', () => {
  it('reports each part of a split message as it lands, so a kill between parts resends only the rest', async () => {
    bed = await discordBed();
    const channel = bed.fake.dmChannelOf(OWNER);
    const text = Array.from({ length: 120 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(9).trim()}`).join('\n\n');
    const reported: { parts: number; inChat: number }[] = [];
    await bed.adapter.send({ chatId: channel }, { text }, { onPartSent: (parts) => reported.push({ parts, inChat: bed?.fake.botMessages(channel).length ?? 0 }) });
    const total = bed.fake.botMessages(channel).length;
    expect(total).toBeGreaterThan(2);
    // Told after every part but the last, each time with that part already in the chat.
    expect(reported).toEqual(Array.from({ length: total }, (_, i) => ({ parts: i + 1, inChat: i + 1 })));
  });
});

describe('discord: the connection', () => {
  it('resumes a connection dropped mid-run: the reply arrives once, and a message sent meanwhile is answered once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = new ScriptedModel([{ text: 'answer one' }, { text: 'answer two' }]);
    const model: ProviderClient = {
      provider: 'gated',
      model: 'gated',
      async *stream(request: ProviderRequest, signal: AbortSignal) {
        if (inner.requests.length === 0) await gate;
        yield* inner.stream(request, signal);
      },
    };
    const { fake } = await start(model, { busyMode: 'queue' });
    const channel = fake.dmChannelOf(OWNER);
    fake.dm(OWNER, 'first');
    await fake.waitFor(() => fake.restCalls('POST', /typing$/).length > 0, 8000, 'the run to start');
    fake.gateway.drop();
    fake.dm(OWNER, 'second');
    release();
    await fake.waitFor(() => texts(fake, channel).includes('answer two'), 15_000, 'the answer to the message sent while disconnected');
    expect(texts(fake, channel)).toEqual(['answer one', 'answer two']);
    expect(fake.gateway.identifies()).toHaveLength(1);
    expect(fake.gateway.resumes()).toHaveLength(1);
    expect(fake.gateway.resumes()[0]?.d).toMatchObject({ session_id: 'session1', token: fake.token });
  });

  it('identifies again after an invalid session, and keeps answering', async () => {
    const { fake } = await start(new ScriptedModel([{ text: 'still here' }]));
    fake.gateway.invalidateNextResume = true;
    fake.gateway.drop();
    await fake.waitFor(() => fake.gateway.identifies().length === 2 && fake.gateway.live, 15_000, 'a second IDENTIFY');
    fake.dm(OWNER, 'are you there?');
    await fake.waitFor(() => texts(fake, fake.dmChannelOf(OWNER)).includes('still here'), 8000, 'the answer');
  });

  it('stops only the Discord channel on a disallowed-intents close, with one sentence naming the fix', async () => {
    const memory = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'memory still works' }]);
    bed = await discordBed();
    bed.fake.gateway.closeIdentifyWith = 4014;
    hob = await startTestGateway(memory, model, {
      adapters: [bed.adapter, memory],
      access: new Map([
        ['memory', { allowFrom: [OWNER.id], allowedGroups: [] }],
        ['discord', { allowFrom: [OWNER.id], allowedGroups: [] }],
      ]),
    });
    expect(bed.fatal).toHaveLength(1);
    expect(bed.fatal[0]).toContain('enable Message Content Intent in the Developer Portal');
    expect(bed.adapter.failure).toBe(bed.fatal[0]);
    memory.say(OWNER, 'hello');
    await memory.waitFor(() => memory.chat(`dm-${OWNER.id}`).some((message) => message.text === 'memory still works'), 8000, 'the memory channel answer');
    expect(bed.fake.gateway.identifies()).toHaveLength(1);
  });

  it('stops the channel with the sentence when Discord closes a running connection for good', async () => {
    const { fake, bed } = await start(new ScriptedModel([]));
    fake.gateway.closeWith(4014);
    await fake.waitFor(() => bed.fatal.length === 1, 8000, 'the fatal sentence');
    expect(bed.fatal[0]).toContain('enable Message Content Intent in the Developer Portal');
    await expect(bed.adapter.send({ chatId: GENERAL_ID }, { text: 'hello' })).rejects.toThrow('the Discord channel is stopped');
    expect(fake.gateway.identifies()).toHaveLength(1);
  });

  it('names the token as the fix when Discord refuses it', async () => {
    bed = await discordBed({}, { token: 'wrong.token.value' });
    await bed.adapter.start({ message: () => undefined, button: () => undefined });
    expect(bed.fatal).toHaveLength(1);
    expect(bed.fatal[0]).toContain('channels.discord.token');
  });
});
