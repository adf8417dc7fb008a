import '../support/env.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import type { InboundMessage } from '../../src/gateway/channel.js';
import type { GatewayOptions } from '../../src/gateway/gateway.js';
import { BOT, startFakeSlack, type FakeSlack, type FakeSlackOptions } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';

const CHANNEL = 'C0TEAM';
const ann = { ...OWNER };
const bob = { ...FRIEND };
const eve = { ...STRANGER };

let fake: FakeSlack;
let adapter: SlackAdapter;
let hob: TestGateway | undefined;

afterEach(async () => {
  await hob?.close();
  hob = undefined;
  await fake.close();
});

async function start(model: ScriptedModel, options: Partial<GatewayOptions> = {}, adapterOptions: Parameters<typeof slackAdapter>[1] = {}, fakeOptions: FakeSlackOptions = {}): Promise<TestGateway> {
  fake = await startFakeSlack(fakeOptions);
  for (const person of [ann, bob, eve]) fake.person(person);
  adapter = slackAdapter(fake, adapterOptions);
  hob = await startTestGateway(adapter, model, options);
  return hob;
}

const textIn = (channel: string, includes: string) => () => fake.seen(channel).find((message) => message.text.includes(includes));
const requestText = (model: ScriptedModel, index: number) => JSON.stringify(model.requests[index]?.messages ?? []);

describe('slack: where hob answers', () => {
  it('answers a channel mention in a thread under that message, keyed slack:<channel>:<thread_ts>', async () => {
    const model = new ScriptedModel([{ text: 'It is noon.' }]);
    const { gateway } = await start(model);
    const ts = await fake.mention(bob, CHANNEL, 'what time is it?');
    const answer = await fake.waitFor(textIn(CHANNEL, 'It is noon.'), 5000, 'the answer');
    expect(answer.threadTs).toBe(ts);
    expect(fake.seen(CHANNEL).every((message) => message.threadTs !== undefined)).toBe(true);
    expect(gateway.pool.all().map((conversation) => conversation.key)).toEqual([`slack:${CHANNEL}:${ts}`]);
    // The mention came twice (app_mention and the message event): one run.
    expect(model.requests).toHaveLength(1);
  });

  it('ignores a channel message without a mention, but takes follow-ups in its thread from anyone allowed', async () => {
    const model = new ScriptedModel([{ text: 'first answer' }, { text: 'second answer' }]);
    await start(model);
    await fake.channelMessage(bob, CHANNEL, 'just chatting');
    const ts = await fake.mention(bob, CHANNEL, 'deploy status?');
    await fake.waitFor(textIn(CHANNEL, 'first answer'), 5000, 'the first answer');
    await fake.channelMessage(ann, CHANNEL, 'and staging?', { threadTs: ts });
    const second = await fake.waitFor(textIn(CHANNEL, 'second answer'), 5000, 'the follow-up answer');
    expect(second.threadTs).toBe(ts);
    expect(model.requests).toHaveLength(2);
    expect(requestText(model, 0)).not.toContain('just chatting');
    // One conversation for the thread: the second request carries both people, framed by name.
    expect(requestText(model, 1)).toContain('[Bob] deploy status?');
    expect(requestText(model, 1)).toContain('[Ann] and staging?');
  });

  it('ignores bots (itself included) and system messages, so no loop starts', async () => {
    const model = new ScriptedModel([{ text: 'only for Ann' }]);
    await start(model);
    await fake.event({ type: 'message', channel: dmOf(ann.id), channel_type: 'im', bot_id: 'BOTHER', text: 'I am a bot', ts: fake.web.nextTs() });
    await fake.event({ type: 'message', channel: dmOf(ann.id), channel_type: 'im', user: BOT.userId, bot_id: BOT.botId, text: 'my own answer', ts: fake.web.nextTs() });
    await fake.event({ type: 'message', subtype: 'channel_join', channel: CHANNEL, channel_type: 'channel', user: bob.id, text: '<@200> has joined', ts: fake.web.nextTs() });
    await fake.dm(ann, 'hello');
    await fake.waitFor(textIn(dmOf(ann.id), 'only for Ann'), 5000, 'the answer');
    expect(model.requests).toHaveLength(1);
    expect(requestText(model, 0)).not.toContain('bot');
  });

  it('handles a redelivered event once', async () => {
    const model = new ScriptedModel([{ text: 'answered once' }, { text: 'answered twice' }]);
    await start(model);
    const eventId = await fake.event(fake.messageEvent(ann, dmOf(ann.id), 'hi', fake.web.nextTs(), { channelType: 'im' }));
    await fake.redeliver(eventId);
    await fake.waitFor(textIn(dmOf(ann.id), 'answered once'), 5000, 'the answer');
    await fake.dm(ann, 'next');
    await fake.waitFor(textIn(dmOf(ann.id), 'answered twice'), 5000, 'the second answer');
    expect(model.requests).toHaveLength(2);
    expect(requestText(model, 1)).not.toMatch(/"hi".*"hi"/);
  });

  it('handles an edit like a corrected message', async () => {
    const model = new ScriptedModel([{ text: 'ok' }, { text: 'corrected' }]);
    await start(model);
    const ts = await fake.dm(ann, 'wehre is it');
    await fake.waitFor(textIn(dmOf(ann.id), 'ok'), 5000, 'the first answer');
    await fake.edit(ann, dmOf(ann.id), ts, 'where is it', { previous: 'wehre is it' });
    await fake.waitFor(textIn(dmOf(ann.id), 'corrected'), 5000, 'the answer to the edit');
    expect(requestText(model, 1)).toContain('[Edited: this replaces what they wrote before; answer the corrected version] where is it');
  });
});

describe('slack: threads after a restart', () => {
  it('takes a follow-up without a mention in a thread hob answered before the restart, and still ignores threads it never posted in', async () => {
    const before = new ScriptedModel([{ text: 'Deploys are green.' }]);
    const first = await start(before);
    const thread = await fake.mention(bob, CHANNEL, 'deploy status?');
    await fake.waitFor(textIn(CHANNEL, 'Deploys are green.'), 5000, 'the answer before the restart');
    const lunch = await fake.channelMessage(bob, CHANNEL, 'lunch?');
    await first.close();
    hob = undefined;

    // hob restarts: a new adapter that remembers nothing, over the same data directory.
    const after = new ScriptedModel([{ text: 'Staging is green too.' }, { text: 'Pizza.' }]);
    adapter = slackAdapter(fake);
    hob = await startTestGateway(adapter, after, { dir: first.dir });
    await fake.channelMessage(ann, CHANNEL, 'anyone hungry?', { threadTs: lunch });
    await fake.channelMessage(ann, CHANNEL, 'and staging?', { threadTs: thread });
    const answer = await fake.waitFor(textIn(CHANNEL, 'Staging is green too.'), 5000, 'the follow-up answer');
    expect(answer.threadTs).toBe(thread);
    expect(requestText(after, 0)).toContain('[Ann] and staging?');

    // In the lunch thread (hob never posted there) only a mention reaches hob.
    await fake.channelMessage(ann, CHANNEL, 'still hungry', { threadTs: lunch });
    await fake.mention(ann, CHANNEL, 'what should we order?', { threadTs: lunch });
    const pizza = await fake.waitFor(textIn(CHANNEL, 'Pizza.'), 5000, 'the answer in the lunch thread');
    expect(pizza.threadTs).toBe(lunch);
    expect(after.requests).toHaveLength(2);
    expect(requestText(after, 1)).toContain('what should we order?');
    expect(JSON.stringify(after.requests)).not.toContain('hungry');
    // Slack was asked once per thread, the "no" for the lunch thread included.
    expect(fake.web.callsOf('conversations.replies').map((call) => call.params.ts).sort()).toEqual([lunch, thread].sort());
  });

  it('keeps a thread\'s order while Slack is asked about it', async () => {
    fake = await startFakeSlack();
    for (const person of [ann, bob]) fake.person(person);
    const received: InboundMessage[] = [];
    const sink = { message: (message: InboundMessage) => void received.push(message), button: () => undefined };
    const earlier = slackAdapter(fake);
    await earlier.start(sink);
    const parent = await fake.channelMessage(bob, CHANNEL, 'the plan');
    await earlier.send({ chatId: CHANNEL, threadId: parent }, { text: 'Noted.' });
    await earlier.stop();

    const later = slackAdapter(fake);
    await later.start(sink);
    try {
      // Slack makes hob wait for the answer about the thread; the mention after it needs no answer.
      fake.web.failNext('conversations.replies', { status: 429, retryAfterSeconds: 1 });
      await fake.channelMessage(ann, CHANNEL, 'first without a mention', { threadTs: parent });
      await fake.mention(bob, CHANNEL, 'second with one', { threadTs: parent });
      await fake.waitFor(() => received.length === 2, 8000, 'both messages');
      expect(received.map((message) => [message.text, message.replyToBot, message.mentionsBot])).toEqual([
        ['first without a mention', true, false],
        ['second with one', false, true],
      ]);
      expect(fake.web.callsOf('conversations.replies')).toHaveLength(2);
    } finally {
      await later.stop();
    }
  });
});

describe('slack: busy indicators', () => {
  it('puts a reaction on the person\'s message while working and removes it when the answer is out', async () => {
    const model = new ScriptedModel([{ text: 'done' }]);
    await start(model);
    const ts = await fake.mention(bob, CHANNEL, 'work');
    await fake.waitFor(textIn(CHANNEL, 'done'), 5000, 'the answer');
    const reaction = await fake.waitFor(() => fake.web.reactions.find((entry) => entry.ts === ts && entry.removed), 5000, 'the reaction removed');
    expect(reaction).toMatchObject({ channel: CHANNEL, name: 'eyes' });
  });

  it('in the assistant pane: suggested prompts, a title, the thinking status, and the answer in the thread', async () => {
    const model = new ScriptedModel([{ text: 'Here you go.' }]);
    await start(model);
    const thread = fake.web.nextTs();
    await fake.assistantThreadStarted(ann, thread);
    await fake.waitFor(() => fake.web.callsOf('assistant.threads.setSuggestedPrompts').length, 5000, 'suggested prompts');
    await fake.dm(ann, 'summarise my day', { threadTs: thread });
    const answer = await fake.waitFor(textIn(dmOf(ann.id), 'Here you go.'), 5000, 'the answer');
    expect(answer.threadTs).toBe(thread);
    expect(fake.web.statuses.map((entry) => entry.status)).toContain('is thinking…');
    await fake.waitFor(() => fake.web.callsOf('assistant.threads.setTitle').find((call) => call.params.title === 'summarise my day'), 5000, 'the title');
    expect(fake.web.reactions).toEqual([]);
  });
});

describe('slack: approvals as buttons', () => {
  it('refuses a foreign press with an ephemeral notice, takes the requester\'s, and ignores a replayed press', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo hi > replay.txt' } }] }, { text: 'Wrote it.' }]);
    const { dir } = await start(model);
    await fake.mention(bob, CHANNEL, 'write the file');
    const prompt = await fake.waitFor(textIn(CHANNEL, 'echo hi > replay.txt'), 5000, 'the approval prompt');
    const allow = fake.web.messages.find((message) => message.ts === prompt.id)?.buttons.find((button) => button.label === 'Allow once');
    expect(allow?.value.length).toBeLessThanOrEqual(64);
    await fake.press(eve, CHANNEL, prompt.id, 'Allow once');
    await fake.waitFor(() => fake.ephemeralsFor(eve).find((text) => text.includes('not yours')), 5000, 'the not-yours notice');
    expect(fake.seen(CHANNEL).find((message) => message.id === prompt.id)?.buttons).toHaveLength(3);
    await fake.press(bob, CHANNEL, prompt.id, 'Allow once');
    await fake.waitFor(textIn(CHANNEL, 'Wrote it.'), 5000, 'the answer');
    const updated = fake.seen(CHANNEL).find((message) => message.id === prompt.id);
    expect(updated?.text).toContain('allowed once by Bob');
    expect(updated?.buttons).toEqual([]);
    // The same press again (Slack redelivering it, or a stale client): nothing runs twice.
    await fake.pressData(bob, CHANNEL, prompt.id, { label: 'Allow once', value: allow?.value ?? '', actionId: allow?.actionId ?? '', threadTs: prompt.threadTs });
    await fake.waitFor(() => fake.ephemeralsFor(bob).find((text) => text.includes('already')), 5000, 'a notice for the replay');
    expect(model.requests).toHaveLength(2);
    expect(readFileSync(join(dir, 'workspace', 'replay.txt'), 'utf8')).toBe('hi\n');
  });
});

describe('slack: /hob', () => {
  it('maps subcommands onto hob\'s commands and answers only the person who typed them', async () => {
    const model = new ScriptedModel([]);
    await start(model);
    await fake.slash(ann, dmOf(ann.id), 'status');
    await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('Model:')), 5000, 'the status');
    await fake.slash(bob, CHANNEL, 'model other-model');
    await fake.waitFor(() => fake.ephemeralsFor(bob).find((text) => text.includes('only for the owner')), 5000, 'owner-only refusal');
    await fake.slash(ann, dmOf(ann.id), 'model other-model');
    await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('Switched to other-model')), 5000, 'the switch');
    await fake.slash(ann, dmOf(ann.id), 'approve');
    await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('Usage: /approve ID')), 5000, 'the usage line');
    await fake.slash(ann, dmOf(ann.id), 'frobnicate');
    const help = await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('frobnicate')), 5000, 'the unknown-command help');
    expect(help).toContain('/hob new');
    await fake.slash(ann, dmOf(ann.id), '');
    await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('/stop')), 5000, 'bare /hob is help');
    // Nothing was posted in the chats, and the model never saw a command.
    expect(fake.web.messages).toEqual([]);
    expect(model.requests).toEqual([]);
  });

  it('/hob stop stops a run in a DM', async () => {
    const model = new ScriptedModel([{ hang: true }]);
    await start(model);
    await fake.dm(ann, 'think forever');
    await fake.waitFor(() => model.requests.length === 1, 5000, 'the model call');
    await fake.slash(ann, dmOf(ann.id), 'stop');
    await fake.waitFor(() => fake.ephemeralsFor(ann).find((text) => text.includes('Stopping')), 5000, 'the ephemeral answer');
    await fake.waitFor(textIn(dmOf(ann.id), 'Stopped.'), 5000, 'the stopped run');
  });
});

describe('slack: files', () => {
  it('downloads files on a message with the bot token into the workspace inbox, images to the model', async () => {
    const model = new ScriptedModel([{ text: 'got them' }]);
    const { dir } = await start(model);
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    await fake.dm(ann, 'look', { files: [{ name: 'notes.txt', mimetype: 'text/plain', bytes: Buffer.from('line one\n') }, { name: 'pic.png', mimetype: 'image/png', bytes: png }] });
    await fake.waitFor(textIn(dmOf(ann.id), 'got them'), 5000, 'the answer');
    const saved = readdirSync(join(dir, 'workspace', 'inbox'));
    expect(saved.some((name) => name.endsWith('notes.txt'))).toBe(true);
    expect(readFileSync(join(dir, 'workspace', 'inbox', saved.find((name) => name.endsWith('notes.txt')) as string), 'utf8')).toBe('line one\n');
    expect(requestText(model, 0)).toContain('"type":"image"');
  });

  it('uploads a file into the thread', async () => {
    await start(new ScriptedModel([]));
    const ref = await adapter.send({ chatId: CHANNEL, threadId: '1700000000.000001' }, { text: 'the report', file: { name: 'report.csv', data: Buffer.from('a,b\n1,2\n') } });
    expect(ref.isFile).toBe(true);
    const message = fake.web.messages.find((entry) => entry.files?.length);
    expect(message).toMatchObject({ channel: CHANNEL, threadTs: '1700000000.000001', text: 'the report' });
    expect(message?.files?.[0]?.name).toBe('report.csv');
    expect(message?.files?.[0]?.bytes.toString()).toContain('a,b\n1,2\n');
  });

  it('sends a long approval command as a file, with the buttons on a message after it', async () => {
    await start(new ScriptedModel([]));
    const ref = await adapter.send({ chatId: CHANNEL, threadId: '1700000000.000001' }, {
      text: 'Allow this command?',
      file: { name: 'command.txt', data: Buffer.from('x'.repeat(5000)) },
      buttons: [[{ label: 'Allow once', data: 'a:1' }, { label: 'Deny', data: 'd:1' }]],
    });
    const prompt = fake.seen(CHANNEL).find((message) => message.id === ref.messageId);
    expect(prompt?.buttons.map((button) => button.label)).toEqual(['Allow once', 'Deny']);
    expect(fake.web.messages.find((entry) => entry.files?.length)?.files?.[0]?.bytes.length).toBe(5000);
  });
});

describe('slack: output', () => {
  it('renders Markdown in a markdown block, and falls back to mrkdwn when Slack refuses the block', async () => {
    await start(new ScriptedModel([]));
    await adapter.send({ chatId: dmOf(ann.id) }, { text: 'This is **bold** and `code`' });
    expect(fake.web.messages[0]?.blocks).toEqual([{ type: 'markdown', text: 'This is **bold** and `code`' }]);
    fake.web.failNext('chat.postMessage', { error: 'invalid_blocks' });
    await adapter.send({ chatId: dmOf(ann.id) }, { text: 'Again **bold**' });
    expect(fake.web.messages[1]?.blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: 'Again *bold*' } }]);
  });

  it('splits a long answer under Slack\'s limit without breaking a code block', async () => {
    await start(new ScriptedModel([]));
    const code = Array.from({ length: 200 }, (_, index) => `line ${index} of the program`).join('\n');
    await adapter.send({ chatId: dmOf(ann.id) }, { text: `Here:\n\n\`\`\`\n${code}\n\`\`\`` });
    const parts = fake.seen(dmOf(ann.id)).map((message) => message.text);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(3000);
      expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    }
  });

  it('reports each part of a split message as it lands, so a kill between parts resends only the rest', async () => {
    await start(new ScriptedModel([]));
    const text = Array.from({ length: 200 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(9).trim()}`).join('\n\n');
    const reported: { parts: number; inChat: number }[] = [];
    await adapter.send({ chatId: dmOf(ann.id) }, { text }, { onPartSent: (parts) => reported.push({ parts, inChat: fake.seen(dmOf(ann.id)).length }) });
    const total = fake.seen(dmOf(ann.id)).length;
    expect(total).toBeGreaterThan(2);
    expect(reported).toEqual(Array.from({ length: total }, (_, i) => ({ parts: i + 1, inChat: i + 1 })));
  });

  it('waits out a 429 on chat.postMessage and delivers the answer once', async () => {
    const model = new ScriptedModel([{ text: 'after the rate limit' }]);
    await start(model);
    fake.web.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 1 });
    await fake.dm(ann, 'hi');
    await fake.waitFor(textIn(dmOf(ann.id), 'after the rate limit'), 8000, 'the answer');
    expect(fake.seen(dmOf(ann.id)).filter((message) => message.text.includes('after the rate limit'))).toHaveLength(1);
    expect(fake.web.callsOf('chat.postMessage').length).toBe(2);
  });
});

describe('slack: the socket', () => {
  it('a socket dropped mid-run reconnects, and the reply arrives once', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo mid-run' } }] }, { text: 'finished after the drop' }]);
    // The client waits its ping timeout before reconnecting.
    await start(model, {}, { clientPingTimeoutMs: 300 });
    await fake.dm(ann, 'run it');
    const prompt = await fake.waitFor(textIn(dmOf(ann.id), 'echo mid-run'), 5000, 'the approval prompt');
    fake.socket.drop();
    await fake.waitFor(() => fake.socket.connections.length === 2 && fake.socket.open().length === 1, 8000, 'a new connection');
    await fake.press(ann, dmOf(ann.id), prompt.id, 'Allow once');
    await fake.waitFor(textIn(dmOf(ann.id), 'finished after the drop'), 5000, 'the answer');
    expect(fake.seen(dmOf(ann.id)).filter((message) => message.text.includes('finished after the drop'))).toHaveLength(1);
    expect(fake.web.callsOf('apps.connections.open')).toHaveLength(2);
  });

  it('replaces a socket that stops delivering and closes the old one', async () => {
    const model = new ScriptedModel([{ text: 'still here' }]);
    // Slack pings the new socket well within its 400 ms timeout (the old one goes quiet).
    await start(model, {}, { serverPingTimeoutMs: 400, clientPingTimeoutMs: 400 }, { pingIntervalMs: 200 });
    const first = fake.socket.connections[0];
    fake.socket.goSilent();
    await fake.waitFor(() => fake.socket.connections.length >= 2 && first?.closed, 8000, 'a replaced socket');
    await fake.dm(ann, 'are you there?');
    await fake.waitFor(textIn(dmOf(ann.id), 'still here'), 5000, 'the answer over the new socket');
    expect(fake.socket.open()).toHaveLength(1);
  });

  it('closes the socket when hob stops', async () => {
    await start(new ScriptedModel([]));
    expect(fake.socket.open()).toHaveLength(1);
    await hob?.close();
    hob = undefined;
    await fake.waitFor(() => fake.socket.open().length === 0, 5000, 'the socket closed');
  });
});
