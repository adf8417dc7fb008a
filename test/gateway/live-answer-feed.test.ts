import { describe, expect, it } from 'vitest';
import type { LiveAnswer } from '../../src/gateway/channel.js';
import { LiveAnswerFeed } from '../../src/gateway/live-answer.js';
import { createLogger } from '../../src/logger.js';
import { MemoryChannel } from '../fakes/memory-channel.js';

const logger = createLogger({ level: 'silent', destination: 'silent' });
const dm = { chatType: 'dm' as const, userId: '1' };
const feedFor = (channel: MemoryChannel, chatType: 'dm' | 'group' = 'dm') => LiveAnswerFeed.for(channel, { chatId: 'c' }, { ...dm, chatType }, logger, 'memory:c');

describe('LiveAnswerFeed', () => {
  it('is not made for a channel that does not stream', () => {
    expect(feedFor(new MemoryChannel())).toBeUndefined();
    expect(feedFor(new MemoryChannel({ streaming: 'none' }))).toBeUndefined();
  });

  it('shows the whole text so far, and starts again when the model call is retried', () => {
    const channel = new MemoryChannel({ streaming: 'draft' });
    const feed = feedFor(channel);
    feed?.onEvent({ type: 'text_delta', text: 'Hel' });
    feed?.onEvent({ type: 'text_delta', text: 'lo' });
    expect(channel.drafts.get('c')).toBe('Hello');
    feed?.onEvent({ type: 'retry', attempt: 2, delayMs: 0, message: 'overloaded' });
    feed?.onEvent({ type: 'text_delta', text: 'Hi' });
    expect(channel.drafts.get('c')).toBe('Hi');
  });

  it('asks a channel that declines this chat only once per run', () => {
    const channel = new MemoryChannel({ streaming: 'draft' });
    let asked = 0;
    const liveAnswer = channel.liveAnswer.bind(channel);
    channel.liveAnswer = (target, options) => {
      asked += 1;
      return liveAnswer(target, options);
    };
    const feed = feedFor(channel, 'group');
    for (const word of ['one ', 'two ', 'three']) feed?.onEvent({ type: 'text_delta', text: word });
    expect(asked).toBe(1);
    expect(feed?.showing).toBe(false);
  });

  it('a live answer that throws costs only the live view', async () => {
    const channel = new MemoryChannel({ streaming: 'native' });
    const broken: LiveAnswer = {
      update: () => {
        throw new Error('update broke');
      },
      finish: () => Promise.reject(new Error('finish broke')),
      cancel: () => Promise.reject(new Error('cancel broke')),
    };
    channel.liveAnswer = () => broken;
    const feed = feedFor(channel);
    expect(() => feed?.onEvent({ type: 'text_delta', text: 'text' })).not.toThrow();
    expect(await feed?.adopt({ text: 'text', parts: ['text'] })).toBeUndefined();
    feed?.onEvent({ type: 'text_delta', text: 'more' });
    await expect(feed?.cancel()).resolves.toBeUndefined();
  });
});
