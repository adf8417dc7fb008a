import { afterEach, describe, expect, it } from 'vitest';
import { messageText } from '../../src/core/messages.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** Messages as people really send them: long pastes, albums, edits, stickers, redeliveries. */

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const dm = (channel: MemoryChannel) => channel.chat(`dm-${OWNER.id}`);
const answered = (channel: MemoryChannel, text: string) => channel.waitFor(() => dm(channel).find((m) => m.text === text), 5000, `"${text}"`);
const settle = () => new Promise((resolve) => setTimeout(resolve, 250));
const file = (name: string) => ({ kind: 'document' as const, fileName: name, mimeType: 'text/plain', download: async () => Buffer.from(name) });

describe('inbound messages the platform splits or changes', () => {
  it('answers a long paste that arrived in two parts once, with the whole text', async () => {
    const channel = new MemoryChannel({ maxMessageLength: 100 });
    const model = new ScriptedModel([{ text: 'read all of it' }, { text: 'a second answer' }]);
    hob = await startTestGateway(channel, model, { pasteWaitMs: 2000 });
    const first = `BEGIN ${'a'.repeat(94)}`;
    channel.say(OWNER, first);
    channel.say(OWNER, 'END of the paste');
    await answered(channel, 'read all of it');
    await settle();
    expect(model.requests).toHaveLength(1);
    expect(messageText(model.requests[0]?.messages.at(-1) ?? { role: 'user', content: [] })).toBe(`${first}\nEND of the paste`);
  });

  it('takes an album as one message with all its files', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'two files' }, { text: 'a second answer' }]);
    hob = await startTestGateway(channel, model, { albumWaitMs: 300 });
    channel.say(OWNER, 'our trip', { batchKey: 'album-1', attachments: [file('one.txt')] });
    channel.say(OWNER, '', { batchKey: 'album-1', attachments: [file('two.txt')] });
    await answered(channel, 'two files');
    await settle();
    expect(model.requests).toHaveLength(1);
    const asked = JSON.stringify(model.requests[0]?.messages.at(-1));
    expect(asked).toContain('our trip');
    expect(asked).toContain('one.txt');
    expect(asked).toContain('two.txt');
  });

  it('answers a short message at once, without waiting for more', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'hi!' }]);
    hob = await startTestGateway(channel, model, { pasteWaitMs: 60_000, albumWaitMs: 60_000 });
    channel.say(OWNER, 'hello');
    await answered(channel, 'hi!');
  });

  it('takes a quick edit as a correction, and leaves a late edit alone', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'set for 9' }, { text: 'moved to 10' }, { text: 'should not happen' }]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, 'remind me at 9');
    await answered(channel, 'set for 9');
    channel.say(OWNER, 'remind me at 10', { editedAfterSeconds: 30 });
    await answered(channel, 'moved to 10');
    expect(messageText(model.requests[1]?.messages.at(-1) ?? { role: 'user', content: [] })).toBe('[Edited: this replaces what they wrote before; answer the corrected version] remind me at 10');
    channel.say(OWNER, 'remind me at 11', { editedAfterSeconds: 3600 });
    await settle();
    expect(model.requests).toHaveLength(2);
  });

  it('says what it cannot read instead of staying silent', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, '', { unsupported: 'sticker' });
    await channel.waitFor(() => dm(channel).find((m) => m.text.startsWith("I can't read stickers")), 5000, 'the notice');
    expect(model.requests).toHaveLength(0);
  });

  it('runs a command once even when the platform delivers its update twice', async () => {
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]));
    channel.say(OWNER, '/new', { updateId: 900_001 });
    await channel.waitFor(() => dm(channel).find((m) => m.text.startsWith('Started a new conversation')), 5000, 'the reply');
    channel.say(OWNER, '/new', { updateId: 900_001 });
    await settle();
    expect(dm(channel).filter((m) => m.text.startsWith('Started a new conversation'))).toHaveLength(1);
  });
});
