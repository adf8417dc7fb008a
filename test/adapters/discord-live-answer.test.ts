import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { GENERAL_ID } from '../fakes/discord/index.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';
import { FRIEND, OWNER } from '../support/gateway.js';

let bed: DiscordBed | undefined;

afterEach(async () => {
  await bed?.close();
  bed = undefined;
});

async function started(): Promise<DiscordBed> {
  bed = await discordBed();
  await bed.adapter.start({ message: () => undefined, button: () => undefined });
  return bed;
}

describe('discord live answers (streaming: edit)', () => {
  it('says it streams by editing', async () => {
    const { adapter } = await started();
    expect(adapter.capabilities.streaming).toBe('edit');
  });

  it('posts one message for a burst of text and edits it to the latest text', async () => {
    const { adapter, fake } = await started();
    const channel = fake.dmChannelOf(OWNER);
    const live = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id });
    let text = '';
    for (let index = 0; index < 50; index++) live?.update((text += `word${index} `));
    await fake.waitFor(() => fake.botMessages(channel)[0]?.content === text, 5000, 'the latest text');
    expect(fake.botMessages(channel)).toHaveLength(1);
    expect(fake.restCalls('POST', /\/messages$/)).toHaveLength(1);
    expect(fake.restCalls('PATCH', /\/messages\/\d+$/)).toHaveLength(1);
  });

  it('finishes by editing the live message into the first part; the gateway sends the rest after it', async () => {
    const { adapter, fake } = await started();
    const channel = fake.dmChannelOf(OWNER);
    const live = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id });
    live?.update('Working on it');
    await fake.waitFor(() => fake.botMessages(channel).length === 1, 5000, 'the live message');
    const liveId = fake.botMessages(channel)[0]?.id;
    const parts = ['First part of a long answer.', 'Second part.', 'Third part.'];
    const adopted = await live?.finish({ text: parts.join('\n\n'), parts });
    expect(adopted).toEqual({ ref: { chatId: channel, messageId: liveId }, parts: 1 });
    expect(fake.botMessages(channel).map((message) => message.content)).toEqual(['First part of a long answer.']);
    expect(fake.restCalls('DELETE', /\/messages\/\d+$/)).toEqual([]);
    for (const call of fake.calls.filter((entry) => entry.method !== 'GET' && /messages/.test(entry.path))) expect(call.body.allowed_mentions).toMatchObject({ parse: [] });
  });

  it('in a server channel replies to the question, and shows only a first part while the text is too long', async () => {
    const { adapter, fake } = await started();
    const asked = fake.say(FRIEND, GENERAL_ID, 'question');
    const live = adapter.liveAnswer?.({ chatId: GENERAL_ID }, { chatType: 'group', userId: FRIEND.id, replyTo: asked });
    live?.update('x '.repeat(1500));
    const shown = await fake.waitFor(() => fake.botMessages(GENERAL_ID)[0], 5000, 'the live message');
    expect(shown.replyTo).toBe(asked);
    expect(shown.content.length).toBeLessThanOrEqual(2000);
    expect(shown.content.endsWith(' …')).toBe(true);
    expect(shown.pinged).toEqual([]);
  });

  it('leaves the answer to the gateway when nothing was shown, and removes what it showed on cancel', async () => {
    const { adapter, fake } = await started();
    const channel = fake.dmChannelOf(OWNER);
    const unused = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id });
    expect(await unused?.finish({ text: 'the answer', parts: ['the answer'] })).toBeUndefined();
    expect(fake.botMessages(channel)).toEqual([]);
    const cancelled = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id });
    cancelled?.update('half an answer');
    await fake.waitFor(() => fake.botMessages(channel).length === 1, 5000, 'the live message');
    await cancelled?.cancel();
    expect(fake.botMessages(channel)).toEqual([]);
  });

  it('when the live message cannot become the answer, withdraws it so the gateway sends the answer alone', async () => {
    const { adapter, fake } = await started();
    const channel = fake.dmChannelOf(OWNER);
    const live = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id });
    live?.update('partial');
    await fake.waitFor(() => fake.botMessages(channel).length === 1, 5000, 'the live message');
    const stored = fake.botMessages(channel)[0];
    if (stored) stored.channelId = 'elsewhere'; // the edit now finds no such message (404)
    expect(await live?.finish({ text: 'final answer', parts: ['final answer'] })).toBeUndefined();
    expect(fake.restCalls('DELETE', /\/messages\/\d+$/)).toHaveLength(1);
  });

  it('an answer sent under the key of a live message that was withdrawn still shows (the live message has its own nonce)', async () => {
    const { adapter, fake } = await started();
    const channel = fake.dmChannelOf(OWNER);
    // As the gateway does: the live message and the answer's first part come from one delivery key.
    const live = adapter.liveAnswer?.({ chatId: channel }, { chatType: 'dm', userId: OWNER.id, onCreating: () => 'k1.abc' });
    live?.update('partial');
    await fake.waitFor(() => fake.botMessages(channel).length === 1, 5000, 'the live message');
    const stored = fake.botMessages(channel)[0];
    if (stored) stored.channelId = 'elsewhere'; // the final edit fails (404), so the live message is withdrawn
    expect(await live?.finish({ text: 'final answer', parts: ['final answer'] })).toBeUndefined();
    // The fake, like the worst Discord could do, answers a known nonce with its message even when that one is gone.
    await adapter.send({ chatId: channel }, { text: 'final answer' }, { deliveryKey: 'k1.abc' });
    expect(fake.botMessages(channel).map((message) => message.content)).toEqual(['final answer']);
  });
});
