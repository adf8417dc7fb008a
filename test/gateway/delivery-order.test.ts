import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** What a person reads when sends fail, in groups, and while hob waits for them. */

let hob: TestGateway | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await hob?.close();
  hob = undefined;
});

const dmOf = (channel: MemoryChannel) => channel.chat(`dm-${OWNER.id}`);

describe('delivery order and replies', () => {
  it('keeps the parts of a long answer in order when the first part fails once', async () => {
    const channel = new MemoryChannel({ maxMessageLength: 100 });
    let failures = 1;
    channel.onSend = (_target, message) => {
      if (message.text.startsWith('Part 0') && failures-- > 0) throw new Error('platform hiccup');
    };
    const answer = [0, 1, 2, 3].map((i) => `Part ${i} ${'x'.repeat(80)}`).join('\n');
    hob = await startTestGateway(channel, new ScriptedModel([{ text: answer }]));
    hob.gateway.delivery.start(20);
    channel.say(OWNER, 'a long answer please');
    await channel.waitFor(() => dmOf(channel).length === 4, 5000, 'four parts');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(dmOf(channel).map((m) => m.text.slice(0, 6))).toEqual(['Part 0', 'Part 1', 'Part 2', 'Part 3']);
  });

  it('a progress message that failed to send is not delivered late, after the answer', async () => {
    const channel = new MemoryChannel();
    let failures = 1;
    channel.onSend = (_target, message) => {
      if (message.text.includes('⏳') && failures-- > 0) throw new Error('platform hiccup');
    };
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'all done' }]);
    hob = await startTestGateway(channel, model);
    hob.gateway.delivery.start(20);
    channel.say(OWNER, 'run true');
    channel.press(OWNER, await channel.waitFor(() => dmOf(channel).find((m) => m.buttons.length > 0), 5000, 'approval'), 'Allow once');
    await channel.waitFor(() => dmOf(channel).find((m) => m.text === 'all done'), 5000, 'answer');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(dmOf(channel).at(-1)?.text).toBe('all done');
  });

  it('in a group, the answer replies to the message of the person who asked', async () => {
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'Bob, it is noon.' }]));
    channel.say(FRIEND, 'what time is it?', { chatId: 'group-1', chatType: 'group', mention: true });
    const answer = await channel.waitFor(() => channel.chat('group-1').find((m) => m.text === 'Bob, it is noon.'), 5000, 'answer');
    expect(answer.replyTo).toMatch(/^in-\d+$/);
  });

  it('does not show "typing" while it waits for the person to approve', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'ok' }]);
    // The typing sign is renewed on an interval: that clock is moved on instead of waited out.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, 'run it');
    const prompt = await channel.waitFor(() => dmOf(channel).find((m) => m.buttons.length > 0), 5000, 'approval');
    const typedBefore = channel.typingChats.length;
    await vi.advanceTimersByTimeAsync(4500); // one typing interval
    vi.useRealTimers();
    expect(channel.typingChats.length).toBe(typedBefore);
    channel.press(OWNER, prompt, 'Allow once');
    await channel.waitFor(() => dmOf(channel).find((m) => m.text === 'ok'), 5000, 'answer');
    expect(channel.typingChats.length).toBeGreaterThan(typedBefore); // typing again once allowed
  });
});
