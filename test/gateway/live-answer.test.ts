import { afterEach, describe, expect, it } from 'vitest';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** Live answers and the outbox: the answer is stored before a live view may become it. */

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const CHAT = `dm-${OWNER.id}`;
const find = (channel: MemoryChannel, text: string) => channel.waitFor(() => channel.chat(CHAT).find((m) => m.text.includes(text)), 5000, `"${text}"`);
const copies = (channel: MemoryChannel, text: string) => channel.chat(CHAT).filter((m) => m.text === text).length;
type OutboxLine = { status: string; message: string; platform_message_id: string | null };
const outboxRows = (test: TestGateway) => test.db.prepare('SELECT status, message, platform_message_id FROM outbox ORDER BY id').all() as OutboxLine[];

describe('live answers and the outbox', () => {
  it('records the streamed message as it starts and the answer before the message becomes it, then marks it sent: nothing is sent twice', async () => {
    const channel = new MemoryChannel({ streaming: 'native' });
    const sends: string[] = [];
    channel.onSend = (_target, message) => void sends.push(message.text);
    let storedWhenFinishing: OutboxLine[] = [];
    channel.beforeLiveFinish = async () => {
      storedWhenFinishing = hob ? outboxRows(hob) : [];
    };
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'The streamed answer, complete.' }]));
    channel.say(OWNER, 'hi');
    const answer = await find(channel, 'The streamed answer, complete.');
    await channel.waitFor(() => outboxRows(hob as TestGateway).some((row) => row.status === 'sent'), 5000, 'the outbox mark');
    // One row: the live message, recorded when it showed, holding the answer it is to become.
    expect(storedWhenFinishing).toEqual([{ status: 'live', message: expect.stringContaining('The streamed answer, complete.'), platform_message_id: answer.id }]);
    expect(outboxRows(hob)).toEqual([expect.objectContaining({ status: 'sent', platform_message_id: answer.id })]);
    expect(sends).toEqual([]);
    expect(copies(channel, 'The streamed answer, complete.')).toBe(1);
  });

  it('a crash after the platform took the end of the stream, before the outbox mark: the restart makes that message the answer, nothing is sent twice', async () => {
    const dir = tempDir('hob-live-crash-');
    const channel = new MemoryChannel({ streaming: 'native' });
    // The platform took the final text; the process dies before hob hears back.
    channel.beforeLiveFinish = () => new Promise<void>(() => undefined);
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'Answer that outlives a crash.' }]), { dir });
    channel.say(OWNER, 'hi');
    await channel.waitFor(() => channel.liveLog.some((entry) => entry.event === 'finish'), 5000, 'the stream finishing');
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();

    channel.beforeLiveFinish = undefined;
    const sends: string[] = [];
    channel.onSend = (_target, message) => void sends.push(message.text);
    hob = await startTestGateway(channel, new ScriptedModel([]), { dir });
    await channel.waitFor(() => outboxRows(hob as TestGateway).every((row) => row.status === 'sent'), 5000, 'the outbox settled');
    expect(sends).toEqual([]);
    expect(copies(channel, 'Answer that outlives a crash.')).toBe(1);
    expect(outboxRows(hob)).toEqual([expect.objectContaining({ status: 'sent', platform_message_id: channel.chat(CHAT)[0]?.id })]);
  });

  it('a crash while the answer was still being written: the restart removes the cut-off text and the resumed run answers once', async () => {
    const dir = tempDir('hob-live-crash-mid-');
    const channel = new MemoryChannel({ streaming: 'edit' });
    // The first model never writes the rest: the process "dies" while it writes.
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'A first try that is cut off halfway', pauseAt: 12, resume: new Promise<void>(() => undefined) }]), { dir });
    channel.say(OWNER, 'hi');
    await find(channel, 'A first try');
    await hob.gateway.stop({ stopRuns: false }); // as if killed mid-answer
    hob.db.close();

    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'The whole answer, after the restart.' }]), { dir });
    await find(channel, 'The whole answer, after the restart.');
    await channel.waitFor(() => outboxRows(hob as TestGateway).every((row) => row.status !== 'live' && row.status !== 'pending'), 5000, 'the outbox settled');
    expect(channel.chat(CHAT).map((m) => m.text)).toEqual(['The whole answer, after the restart.']);
  });

  it('a failed run ends the live answer and says what went wrong', async () => {
    const channel = new MemoryChannel({ streaming: 'native' });
    let fail: (error: Error) => void = () => undefined;
    const broken = new Promise<void>((_resolve, reject) => (fail = reject));
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'Half an answer and then', pauseAt: 14, resume: broken }]));
    channel.say(OWNER, 'hi');
    await find(channel, 'Half an answer');
    fail(new Error('connection reset'));
    await find(channel, 'The model request failed');
    expect(channel.chat(CHAT).some((m) => m.text.includes('Half an answer'))).toBe(false);
    expect(channel.liveLog.at(-1)?.event).toBe('cancel');
  });

  it('an answer waiting behind an undelivered message does not pass it through the live view', async () => {
    const channel = new MemoryChannel({ streaming: 'native' });
    let down = true;
    channel.onSend = (_target, message) => {
      if (down && message.text === 'An earlier notice.') throw new Error('platform down');
    };
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'The later answer.' }]));
    await hob.gateway.delivery.send('memory', { chatId: CHAT }, { text: 'An earlier notice.' });
    channel.say(OWNER, 'hi');
    await channel.waitFor(() => channel.liveLog.some((entry) => entry.event === 'cancel'), 5000, 'the live view to end');
    expect(copies(channel, 'The later answer.')).toBe(0);
    down = false;
    await find(channel, 'The later answer.');
    expect(channel.chat(CHAT).map((m) => m.text)).toEqual(['An earlier notice.', 'The later answer.']);
  });

  it('an answer too long for one message: the live message becomes its first part and the rest follow; nothing is deleted', async () => {
    const channel = new MemoryChannel({ streaming: 'edit', maxMessageLength: 200 });
    const long = Array.from({ length: 12 }, (_, n) => `Line ${n} of a long answer.`).join('\n\n');
    hob = await startTestGateway(channel, new ScriptedModel([{ text: long }]));
    channel.say(OWNER, 'hi');
    await find(channel, 'Line 11 of a long answer.');
    await channel.waitFor(() => new SqliteOutbox((hob as TestGateway).db).counts().pending === 0, 5000, 'the outbox to empty');
    const messages = channel.chat(CHAT);
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.map((m) => m.text).join('\n\n')).toBe(long);
    expect(channel.liveLog.some((entry) => entry.event === 'cancel')).toBe(false);
    // The first part is the live message, edited into place.
    expect(messages[0]?.id).toBe('1');
    expect(channel.liveLog.filter((entry) => entry.event === 'finish').map((entry) => entry.text)).toEqual([messages[0]?.text]);
  });
});
