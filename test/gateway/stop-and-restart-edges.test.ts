import { afterEach, describe, expect, it } from 'vitest';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** Stopping, resetting and restarting in the middle of things. */

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const dm = (channel: MemoryChannel) => channel.chat(`dm-${OWNER.id}`);
const find = (channel: MemoryChannel, text: string) => channel.waitFor(() => [...dm(channel)].reverse().find((m) => m.text.includes(text)), 5000, `"${text}"`);
const file = (name: string) => ({ kind: 'document' as const, fileName: name, mimeType: 'text/plain', ref: name, download: async () => Buffer.from(name) });

describe('stop, /new and restarts mid-run', () => {
  it('a shutdown while an approval waits is not taken as "no": the model hears the call never ran', async () => {
    const dir = tempDir('hob-stop-approval-');
    const first = new MemoryChannel();
    hob = await startTestGateway(first, new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo later' } }] }]), { dir });
    first.say(OWNER, 'run later');
    await find(first, 'echo later');
    await hob.close();

    const resumed = new ScriptedModel([{ text: 'Shall I run it now?' }]);
    hob = await startTestGateway(new MemoryChannel(), resumed, { dir });
    await new MemoryChannel().waitFor(() => resumed.requests.length === 1, 5000, 'the resumed run');
    const result = JSON.stringify(resumed.requests[0]?.messages.at(-1));
    expect(result).toContain('Not run: hob is shutting down while this call waited for approval');
    expect(result).not.toContain('denied');
  });

  it('/new while an approval waits leaves the new conversation clean', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo old' } }] }, { text: 'fresh answer' }]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, 'old topic');
    await find(channel, 'echo old');
    channel.say(OWNER, '/new');
    await find(channel, 'Started a new conversation');
    channel.say(OWNER, 'new topic');
    await find(channel, 'fresh answer');
    const messages = model.requests.at(-1)?.messages ?? [];
    expect(messages).toHaveLength(1);
    expect(JSON.stringify(messages)).toContain('new topic');
    expect(JSON.stringify(messages)).not.toContain('old');
  });

  it('/stop also drops a message that was waiting to be steered into the run', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ hang: true }, { text: 'should not run' }]);
    hob = await startTestGateway(channel, model, { busyMode: 'steer' });
    channel.say(OWNER, 'slow one');
    await channel.waitFor(() => model.requests.length === 1, 5000, 'the run');
    channel.say(OWNER, 'and also this');
    channel.say(OWNER, '/stop');
    expect((await find(channel, 'Stopping.')).text).toContain('Dropped 1 queued message');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.requests).toHaveLength(1);
  });

  it('an album still queued when hob stops is answered after the restart as one message', async () => {
    const dir = tempDir('hob-album-restart-');
    const first = new MemoryChannel();
    hob = await startTestGateway(first, new ScriptedModel([{ hang: true }]), { dir, busyMode: 'queue', albumWaitMs: 50 });
    first.say(OWNER, 'busy');
    await first.waitFor(() => first.typingChats.length > 0, 5000, 'the first run');
    first.say(OWNER, 'holiday', { batchKey: 'album-7', attachments: [file('a.txt')] });
    first.say(OWNER, '', { batchKey: 'album-7', attachments: [file('b.txt')] });
    const batched = () => (hob?.db.prepare('SELECT COUNT(*) n FROM inbox WHERE batch IS NOT NULL').get() as { n: number } | undefined)?.n;
    await first.waitFor(() => batched() === 2, 5000, 'the album queued as one message');
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();

    const second = new MemoryChannel();
    second.files.set('a.txt', Buffer.from('a')).set('b.txt', Buffer.from('b'));
    const resumed = new ScriptedModel([{ text: 'resumed' }, { text: 'two photos' }, { text: 'a third answer' }]);
    hob = await startTestGateway(second, resumed, { dir, busyMode: 'queue' });
    await find(second, 'two photos');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resumed.requests).toHaveLength(2);
    const asked = JSON.stringify(resumed.requests[1]?.messages.at(-1));
    expect(asked).toContain('a.txt');
    expect(asked).toContain('b.txt');
  });
});
