import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { slackAdapter } from '../support/slack-testbed.js';

/** Model output that would ping a whole channel, a whole workspace, and a user group. */
const PINGS = 'Heads up <!channel>, <!here> and <!everyone>; also <!subteam^S0ONCALL|oncall> and <!here|here>.';
const THREAD = '1700000000.000001';
const ann = { id: 'UANN', name: 'Ann' };

let fake: FakeSlack;
let adapter: SlackAdapter;

beforeEach(async () => {
  fake = await startFakeSlack();
  adapter = slackAdapter(fake, { streamFlushMs: 20, streamFlushChars: 1000 });
  await adapter.start({ message: () => undefined, button: () => undefined });
});

afterEach(async () => {
  await adapter.stop();
  await fake.close();
});

const pinged = () => fake.web.messages.flatMap((message) => message.broadcasts);
const shown = () => fake.web.messages.filter((message) => !message.deleted).map((message) => message.text.replace(/\u2060/g, ''));

describe('slack: broadcast mentions in what hob sends are plain text', () => {
  it('in a message (markdown block and notification text), a plain message, an edit and a long answer in parts', async () => {
    const ref = await adapter.send({ chatId: 'C0TEAM', threadId: THREAD }, { text: PINGS });
    await adapter.send({ chatId: 'C0TEAM', threadId: THREAD }, { text: PINGS, plain: true });
    await adapter.edit(ref, { text: `${PINGS} (edited)` });
    await adapter.send({ chatId: 'C0TEAM', threadId: THREAD }, { text: `${'word '.repeat(700)}\n\n${PINGS}\n\n${'more '.repeat(700)}<!channel>` });
    expect(fake.web.messages.length).toBeGreaterThanOrEqual(4);
    expect(pinged()).toEqual([]);
    expect(shown()[0]).toContain('Heads up @channel, @here and @everyone; also @oncall and @here.');
    expect(shown()[1]).toContain('@channel');
  });

  it('in the mrkdwn fallback when Slack refuses the markdown block, and in a file comment', async () => {
    fake.web.failNext('chat.postMessage', { error: 'invalid_blocks' });
    await adapter.send({ chatId: 'C0TEAM', threadId: THREAD }, { text: PINGS });
    await adapter.send({ chatId: 'C0TEAM', threadId: THREAD }, { text: '', file: { name: 'report.txt', data: Buffer.from('data'), caption: PINGS } });
    expect(fake.web.callsOf('chat.postMessage')).toHaveLength(2);
    expect(pinged()).toEqual([]);
    expect(shown().every((text) => text.includes('@channel'))).toBe(true);
  });

  it('in a stream, also when a mention arrives split over two flushes', async () => {
    const live = adapter.liveAnswer?.({ chatId: 'C0TEAM', threadId: THREAD }, { chatType: 'group', userId: ann.id });
    if (!live) throw new Error('expected a live answer in a channel thread');
    live.update('Deploy done, <!chan');
    await fake.waitFor(() => fake.web.callsOf('chat.startStream').length === 1, 5000, 'the stream to start');
    live.update('Deploy done, <!channel> please check');
    await fake.waitFor(() => fake.web.callsOf('chat.appendStream').length === 1, 5000, 'an append');
    const final = `Deploy done, <!channel> please check. ${PINGS}`;
    const ref = await live.finish({ text: final, parts: [final] });
    expect(ref).toBeDefined();
    expect(pinged()).toEqual([]);
    expect(shown()).toEqual(['Deploy done, @channel please check. Heads up @channel, @here and @everyone; also @oncall and @here.']);
  });

  it('the fake is strict: the same text sent raw would have pinged (the control)', async () => {
    await adapter.stop();
    const { WebClient } = await import('@slack/web-api');
    const raw = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl });
    await raw.chat.postMessage({ channel: dmOf(ann.id), text: PINGS });
    const stream = raw.chatStream({ channel: dmOf(ann.id), thread_ts: THREAD, buffer_size: 1 });
    await stream.append({ markdown_text: 'x <!ev' });
    await stream.stop({ markdown_text: 'eryone>' });
    expect(pinged()).toEqual(['channel', 'here', 'everyone', 'subteam^S0ONCALL', 'everyone']);
    adapter = slackAdapter(fake);
    await adapter.start({ message: () => undefined, button: () => undefined });
  });
});
