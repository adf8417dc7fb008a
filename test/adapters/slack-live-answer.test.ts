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
    const ref = await live.finish('Hello, world!');
    expect(streamCalls()).toEqual(['chat.startStream', 'chat.appendStream', 'chat.stopStream']);
    expect(fake.web.messages).toHaveLength(1);
    expect(fake.web.messages[0]).toMatchObject({ text: 'Hello, world!', stream: 'stopped', threadTs: THREAD });
    expect(ref).toEqual({ chatId: dmOf(ann.id), threadId: THREAD, messageId: fake.web.messages[0]?.ts });
  });

  it('flushes by size as well as by time', async () => {
    await started({ streamFlushMs: 60_000, streamFlushChars: 10 });
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('a long enough first piece');
    await fake.waitFor(() => fake.web.messages[0]?.text === 'a long enough first piece', 5000, 'a flush by size');
    await live?.finish('a long enough first piece.');
    expect(fake.web.messages[0]?.text).toBe('a long enough first piece.');
  });

  it('names the recipient when streaming in a channel thread', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: 'C0TEAM', threadId: THREAD }, { chatType: 'group', userId: ann.id });
    const ref = await live?.finish('For you, Ann.');
    expect(ref?.messageId).toBeDefined();
    expect(fake.web.callsOf('chat.startStream')[0]?.params).toMatchObject({ channel: 'C0TEAM', thread_ts: THREAD, recipient_user_id: ann.id, recipient_team_id: 'T1' });
  });

  it('falls back when Slack refuses streaming: finish says no, nothing is left behind, later answers are not streamed', async () => {
    fake.web.refuse('chat.startStream', 'not_allowed_token_type');
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('Hello');
    await fake.waitFor(() => fake.web.callsOf('chat.startStream').length === 1, 5000, 'the refused start');
    expect(await live?.finish('Hello there')).toBeUndefined();
    expect(fake.web.messages).toEqual([]);
    expect(adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id })).toBeUndefined();
  });

  it('removes a partial stream when the final answer is not what was streamed, so the gateway\'s answer is the only copy', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('Draft that changes');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the stream');
    expect(await live?.finish('A different final answer')).toBeUndefined();
    expect(fake.web.messages.filter((message) => !message.deleted)).toEqual([]);
  });

  it('keeps the stream when the final text only drops trailing blanks', async () => {
    await started();
    const live = adapter.liveAnswer?.({ chatId: dmOf(ann.id), threadId: THREAD }, { chatType: 'dm', userId: ann.id });
    live?.update('All done.\n\n');
    await fake.waitFor(() => fake.web.messages.length === 1, 5000, 'the stream');
    expect(await live?.finish('All done.')).toBeDefined();
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

  it('does not stream a top-level DM answer (Slack streams into threads)', async () => {
    await started();
    expect(adapter.liveAnswer?.({ chatId: dmOf(ann.id) }, { chatType: 'dm', userId: ann.id })).toBeUndefined();
    expect(adapter.capabilities.streaming).toBe('native');
  });
});
