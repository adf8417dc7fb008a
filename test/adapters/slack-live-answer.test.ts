import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { slackAdapter } from '../support/slack-testbed.js';

const ann = { id: 'UANN', name: 'Ann' };
const THREAD = '1700000000.000001';
const STREAM_METHODS = new Set(['chat.startStream', 'chat.appendStream', 'chat.stopStream', 'chat.delete', 'chat.postMessage']);

let fake: FakeSlack;
let adapter: SlackAdapter;

beforeEach(async () => {
  fake = await startFakeSlack();
});

afterEach(async () => {
  await adapter.stop();
  await fake.close();
});

async function started(options: Parameters<typeof slackAdapter>[1] = {}): Promise<SlackAdapter> {
  adapter = slackAdapter(fake, { streamFlushMs: 20, streamFlushChars: 1000, ...options });
  await adapter.start({ message: () => undefined, button: () => undefined });
  return adapter;
}

/** An answer that fits one message. */
const whole = (text: string) => ({ text, parts: [text] });

const streamCalls = () => fake.web.calls.filter((call) => STREAM_METHODS.has(call.method)).map((call) => call.method);

describe('slack native streaming (LiveAnswer)', () => {
  it('streams start, appends, stop: the streamed message is the answer', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    if (!live) throw new Error('expected a live answer in a DM thread');
    live.update('Hel');
    await fake.waitFor(() => fake.web.callsOf('chat.startStream').length === 1, 5000, 'the stream to start on the timer');
    // A short answer appears as it is written: the timer flushed it, no size was reached.
    expect(fake.web.messages[0]?.text).toBe('Hel');
    live.update('Hello, wor');
    await fake.waitFor(() => fake.web.callsOf('chat.appendStream').length === 1, 5000, 'an append');
    const adopted = await live.finish(whole('Hello, world!'));
    expect(streamCalls()).toEqual(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);
    expect(fake.web.messages).toHaveLength(1);
    expect(fake.web.messages[0]).toMatchObject({ text: 'Hello, world!', stream: 'stopped', threadTs: THREAD });
    expect(adopted).toEqual({ ref: { chatId: dmOf(ann.id), threadId: THREAD, messageId: fake.web.messages[0]?.ts }, parts: 1 });
  });

  it('flushes by size as well as by time', async () => {
    await started({ streamFlushMs: 60_000, streamFlushChars: 10 });
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('a long enough first piece');
    await fake.waitFor(() => fake.web.messages[0]?.text === 'a long enough first piece', 5000, 'a flush by size');
    await live?.finish(whole('a long enough first piece.'));
    expect(fake.web.messages[0]?.text).toBe('a long enough first piece.');
  });

  it('names the recipient when streaming in a channel thread', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: 'C0TEAM', threadId: THREAD }, { chatType: 'group', userId: ann.id });
    const adopted = await live?.finish(whole('For you, Ann.'));
    expect(adopted?.ref.messageId).toBeDefined();
    expect(fake.web.callsOf('chat.startStream')[0]?.params).toMatchObject({ channel: 'C0TEAM', thread_ts: THREAD, recipient_user_id: ann.id, recipient_team_id: 'T1' });
  });

  it('falls back when Slack refuses streaming: finish says no, nothing is left behind, later answers show by editing one message', async () => {
    fake.web.refuse('chat.startStream', 'not_allowed_token_type');
    await started({ liveEditIntervalMs: 20 });
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('Hello');
    await fake.waitFor(() => fake.web.callsOf('chat.startStream').length === 1, 5000, 'the refused start');
    expect(await live?.finish(whole('Hello there'))).toBeUndefined();
    expect(fake.web.messages).toEqual([]);
    const next = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    next?.update('Second answer, growing');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the edited live message');
    const adopted = await next?.finish(whole('Second answer, grown.'));
    expect(adopted?.ref.messageId).toBe(fake.web.messages[0]?.ts);
    expect(fake.web.messages[0]).toMatchObject({ text: 'Second answer, grown.', threadTs: THREAD, deleted: false });
    expect(fake.web.callsOf('chat.startStream')).toHaveLength(1);
  });

  it('removes a partial stream when the final answer is not what was streamed, so the gateway\'s answer is the only copy', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('Draft that changes');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the stream');
    expect(await live?.finish(whole('A different final answer'))).toBeUndefined();
    expect(fake.web.messages.filter((message) => !message.deleted)).toEqual([]);
  });

  it('keeps the stream when the final text only drops trailing blanks', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('All done.\n\n');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the stream');
    expect(await live?.finish(whole('All done.'))).toBeDefined();
    expect(fake.web.messages.filter((message) => !message.deleted).map((message) => message.text.trim())).toEqual(['All done.']);
  });

  it('cancel ends the stream without leaving a partial answer', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('Half an');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the stream');
    await live?.cancel();
    expect(fake.web.messages.filter((message) => !message.deleted)).toEqual([]);
    expect(streamCalls()).toEqual(['chat.startStream', 'chat.stopStream', 'chat.delete']);
  });

  it('shows a top-level DM answer by editing one message (chat.startStream needs a thread), which becomes the answer', async () => {
    await started({ liveEditIntervalMs: 20 });
    const shown: string[] = [];
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id) }, { chatType: 'dm', userId: ann.id, onShown: (ref) => shown.push(ref.messageId) });
    if (!live) throw new Error('expected a live answer in a top-level DM');
    live.update('Counting:');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the live message');
    live.update('Counting: one two');
    await fake.waitFor(() => fake.web.messages[0]?.text === 'Counting: one two', 5000, 'the edit');
    const adopted = await live.finish(whole('Counting: one two three.'));
    const [message] = fake.web.messages;
    expect(adopted).toEqual({ ref: { chatId: dmOf(ann.id), messageId: message?.ts }, parts: 1 });
    expect(message?.versions).toEqual(['Counting:', 'Counting: one two', 'Counting: one two three.']);
    expect(message?.threadTs).toBeUndefined();
    expect(fake.web.callsOf('chat.startStream')).toEqual([]);
    expect(new Set(shown)).toEqual(new Set([message?.ts]));
  });
});
