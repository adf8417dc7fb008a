import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { builtinTools } from '../../src/tools/builtins.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/engine.js';

let hob: TestGateway | undefined;

/** Polls a condition the channel cannot announce (a database row), for up to 5 s. */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const chat = (channel: MemoryChannel) => channel.chat(`dm-${OWNER.id}`);
const find = (channel: MemoryChannel, text: string) => channel.waitFor(() => chat(channel).find((m) => m.text.includes(text)), 5000, `"${text}"`);

describe('gateway', () => {
  it('asks the person a question with buttons and gives the tapped answer to the model', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'ask_user', input: { question: 'Which city?', options: ['Paris', 'Rome'] } }] }, { text: 'Rome it is.' }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    channel.say(OWNER, 'plan a trip');
    const question = await find(channel, 'Which city?');
    channel.press(OWNER, question, 'Rome');
    await find(channel, 'Rome it is.');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('The person answered: Rome');
    const closed = chat(channel).find((m) => m.id === question.id);
    expect(closed?.text).toContain('→ Rome');
    expect(closed?.buttons).toEqual([]);
  });

  it("in a group, tells someone else pressing a person's question that it is not theirs", async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'ask_user', input: { question: 'Tea or coffee?', options: ['Tea', 'Coffee'] } }] }, { text: 'Tea for Ann.' }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    channel.say(OWNER, 'a drink please', { chatId: 'group-2', chatType: 'group', mention: true });
    const question = await channel.waitFor(() => channel.chat('group-2').find((m) => m.text.includes('Tea or coffee?')), 5000, 'the question');
    channel.press(FRIEND, question, 'Coffee');
    await channel.waitFor(() => channel.answers.find((a) => a.userId === FRIEND.id), 5000, "Bob's notice");
    expect(channel.answers.find((a) => a.userId === FRIEND.id)?.text).toBe('This question is for someone else.');
    channel.press(OWNER, question, 'Tea');
    await channel.waitFor(() => channel.chat('group-2').find((m) => m.text === 'Tea for Ann.'), 5000, 'the answer');
  });

  it('takes a typed answer to a question too', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'ask_user', input: { question: 'Your name?' } }] }, { text: 'Hi Annie.' }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    channel.say(OWNER, 'greet me');
    await find(channel, 'Your name?');
    channel.say(OWNER, 'Annie');
    await find(channel, 'Hi Annie.');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('The person answered: Annie');
  });

  it('attaches a long command as a file instead of cutting it, and takes /approve ID as text', async () => {
    const channel = new MemoryChannel();
    const long = `echo ${'x'.repeat(3000)} > big.txt`;
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: long } }] }, { text: 'Wrote big.txt.' }]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, 'write it');
    const prompt = await find(channel, 'is attached as approval-');
    expect(prompt.file?.size).toBe(long.length);
    const id = /approve (a[0-9a-f]+)/.exec(prompt.text)?.[1];
    channel.say(OWNER, `/approve ${id}`);
    await find(channel, 'Wrote big.txt.');
    expect(readFileSync(join(hob.dir, 'workspace', 'big.txt'), 'utf8').trim()).toBe('x'.repeat(3000));
  });

  it('sends a workspace file into the chat', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'write_file', input: { path: 'report.txt', content: 'all good' } }] }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    model.push({ toolCalls: [{ name: 'send_file', input: { path: 'report.txt', caption: 'Your report' } }] }, { text: 'Sent.' });
    channel.say(OWNER, 'write and send the report');
    const approval = await find(channel, 'report.txt');
    channel.press(OWNER, approval, 'Allow once');
    const sent = await channel.waitFor(() => chat(channel).find((m) => m.file), 5000, 'a file');
    expect(sent.file).toEqual({ name: 'report.txt', size: 8 });
    expect(readFileSync(join(hob.dir, 'workspace', 'report.txt'), 'utf8')).toBe('all good');
  });

  it('sends a file from outside the workspace only after an approval, and no file through a link that leads out', async () => {
    const channel = new MemoryChannel();
    const outside = join(tempDir('hob-outside-'), 'notes.txt');
    writeFileSync(outside, 'private notes');
    const model = new ScriptedModel([{ toolCalls: [{ name: 'send_file', input: { path: outside } }] }, { text: 'Sent your notes.' }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    channel.say(OWNER, 'send me my notes');
    const approval = await find(channel, 'notes.txt');
    expect(approval.buttons.map((b) => b.label)).toContain('Allow once');
    expect(chat(channel).some((m) => m.file)).toBe(false);
    channel.press(OWNER, approval, 'Allow once');
    await channel.waitFor(() => chat(channel).find((m) => m.file), 5000, 'the file');
    await find(channel, 'Sent your notes.');

    symlinkSync(outside, join(hob.dir, 'workspace', 'link.txt'));
    model.push({ toolCalls: [{ name: 'send_file', input: { path: 'link.txt' } }] }, { text: 'Could not send it.' });
    channel.say(OWNER, 'send link.txt');
    await find(channel, 'Could not send it.');
    expect(chat(channel).filter((m) => m.file)).toHaveLength(1);
    expect(JSON.stringify(model.requests.at(-1)?.messages.at(-1))).toContain('links to a file outside the workspace');
  });

  it('shows a refused call in the progress message, with the reason', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'read_file', input: { path: '~/.aws/credentials' } }] }, { text: 'I may not read that.' }]);
    hob = await startTestGateway(channel, model, { tools: builtinTools() });
    channel.say(OWNER, 'show my aws keys');
    await find(channel, 'I may not read that.');
    const progress = await find(channel, '❌ read_file');
    expect(progress.text).toContain('credentials — denied');
  });

  it('in a group, obeys /cmd and ignores /cmd@otherbot', async () => {
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]));
    channel.say(OWNER, '/status@otherbot', { chatId: 'g', chatType: 'group' });
    channel.say(OWNER, '/status', { chatId: 'g', chatType: 'group' });
    await channel.waitFor(() => channel.chat('g').find((m) => m.text.includes('Model: scripted-model')), 5000, 'status');
    expect(channel.chat('g')).toHaveLength(1);
  });

  it('tells the person when the queue is full instead of dropping the message', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ hang: true }]);
    hob = await startTestGateway(channel, model, { busyMode: 'queue', maxQueue: 2 });
    channel.say(OWNER, 'first');
    await channel.waitFor(() => model.requests.length === 1, 5000, 'first call');
    channel.say(OWNER, 'second');
    channel.say(OWNER, 'third');
    channel.say(OWNER, 'fourth');
    await find(channel, 'I did not take this one');
  });

  it('retries a failed delivery from the outbox and sends it once', async () => {
    const channel = new MemoryChannel();
    let failures = 2;
    channel.onSend = () => {
      if (failures-- > 0) throw new Error('network down');
    };
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'eventually delivered' }]));
    hob.gateway.delivery.start(20);
    channel.say(OWNER, 'hi');
    await find(channel, 'eventually delivered');
    const outbox = new SqliteOutbox(hob.db);
    await eventually(() => outbox.counts().sent === 1);
    expect(outbox.counts()).toMatchObject({ pending: 0, failed: 0 });
    expect(chat(channel).filter((m) => m.text.includes('eventually delivered'))).toHaveLength(1);
  });

  it('does not send a reply twice while its first send is still in flight', async () => {
    const channel = new MemoryChannel();
    const slowSend = channel.send.bind(channel);
    channel.send = async (target, message) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return slowSend(target, message);
    };
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'just once' }]));
    hob.gateway.delivery.start(10);
    channel.say(OWNER, 'hi');
    await find(channel, 'just once');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(chat(channel).filter((m) => m.text === 'just once')).toHaveLength(1);
  });

  it('after a restart, closes a pending approval, tells the model the call never ran, and delivers what was left in the outbox', async () => {
    const dir = tempDir('hob-restart-');
    const first = new MemoryChannel();
    first.onSend = (_target, message) => {
      if (message.text.includes('undeliverable')) throw new Error('platform down');
    };
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'touch later' }, id: 'toolu_x' }] }]);
    hob = await startTestGateway(first, model, { dir });
    first.say(OWNER, 'touch later');
    const approval = await first.waitFor(() => chat(first).find((m) => m.text.includes('touch later')), 5000, 'approval');
    await hob.gateway.delivery.send('memory', { chatId: `dm-${OWNER.id}` }, { text: 'undeliverable notice' });
    await hob.gateway.stop({ stopRuns: false }); // the process "dies": nothing else runs
    hob.db.close();

    const second = new MemoryChannel();
    second.chat(`dm-${OWNER.id}`).push({ ...approval, buttons: [...approval.buttons] });
    const resumed = new ScriptedModel([{ text: 'I will ask again when you are ready.' }]);
    hob = await startTestGateway(second, resumed, { dir });
    await find(second, 'I will ask again');
    expect(JSON.stringify(resumed.requests[0]?.messages.at(-1))).toContain('Not run: hob restarted while this call waited for approval');
    expect(chat(second).find((m) => m.id === approval.id)?.text).toContain('cancelled');
    await find(second, 'undeliverable notice');
    expect(chat(second).filter((m) => m.text === 'undeliverable notice')).toHaveLength(1);
  });

  it('after a restart, does not run a steered message again once the run has read it', async () => {
    const dir = tempDir('hob-steer-restart-');
    const first = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'sleep 0.2' } }] }, { hang: true }]);
    hob = await startTestGateway(first, model, { dir });
    first.say(OWNER, 'run it');
    const prompt = await first.waitFor(() => chat(first).find((m) => m.text.includes('sleep 0.2')), 5000, 'approval');
    first.say(OWNER, 'also check the logs');
    first.press(OWNER, prompt, 'Allow once');
    await first.waitFor(() => model.requests.length === 2, 5000, 'the second model call');
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('also check the logs');
    await hob.gateway.stop({ stopRuns: false }); // the process "dies" while the model is answering
    hob.db.close();

    const resumed = new ScriptedModel([{ text: 'logs look clean' }, { text: 'a second answer nobody asked for' }]);
    hob = await startTestGateway(new MemoryChannel(), resumed, { dir });
    await eventually(() => resumed.requests.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resumed.requests).toHaveLength(1);
    expect(JSON.stringify(resumed.requests[0]?.messages).split('also check the logs')).toHaveLength(2);
  });

  it('after a restart, a message still queued keeps its attached file', async () => {
    const dir = tempDir('hob-attach-restart-');
    const first = new MemoryChannel();
    const notes = Buffer.from('milk, eggs, bread\n');
    first.files.set('file-1', notes);
    hob = await startTestGateway(first, new ScriptedModel([{ hang: true }]), { dir, busyMode: 'queue' });
    first.say(OWNER, 'think about dinner');
    await first.waitFor(() => first.typingChats.length > 0, 5000, 'the first run');
    first.say(OWNER, 'here is my list', { attachments: [{ kind: 'document', fileName: 'list.txt', mimeType: 'text/plain', sizeBytes: notes.length, ref: 'file-1', download: async () => notes }] });
    // Messages are stored at the end of the turn they arrive in (with the others of that turn: router.ts).
    await first.waitFor(() => (hob?.db.prepare("SELECT count(*) AS n FROM inbox WHERE status = 'queued'").get() as { n: number }).n === 1, 5000, 'the file message stored, queued');
    await hob.gateway.stop({ stopRuns: false }); // the process "dies" with the file message still queued
    hob.db.close();

    const second = new MemoryChannel();
    second.files.set('file-1', notes);
    const resumed = new ScriptedModel([{ text: 'dinner ideas' }, { text: 'got your list' }]);
    hob = await startTestGateway(second, resumed, { dir, busyMode: 'queue' });
    await second.waitFor(() => chat(second).find((m) => m.text.includes('got your list')), 5000, 'the answer about the list');
    const asked = JSON.stringify(resumed.requests[1]?.messages.at(-1));
    expect(asked).toContain('here is my list');
    const saved = /inbox\/([\w.-]+list\.txt)/.exec(asked)?.[1];
    expect(saved).toBeDefined();
    expect(readFileSync(join(dir, 'workspace', 'inbox', saved ?? ''), 'utf8')).toBe('milk, eggs, bread\n');
    expect(asked).not.toContain('lost in a restart');
  });

  it('shows the decision on an approval prompt that reached the chat only on a retry', async () => {
    const channel = new MemoryChannel();
    let failures = 1;
    channel.onSend = (_target, message) => {
      if (message.text.includes('Allow **bash**') && failures-- > 0) throw new Error('platform hiccup');
    };
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo retried' } }] }, { text: 'ran it' }]);
    hob = await startTestGateway(channel, model);
    hob.gateway.delivery.start(20);
    channel.say(OWNER, 'run it');
    const prompt = await find(channel, 'echo retried');
    channel.press(OWNER, prompt, 'Allow once');
    await find(channel, 'ran it');
    expect(chat(channel).find((m) => m.id === prompt.id)?.text).toContain('allowed once by Ann');
    expect(chat(channel).find((m) => m.id === prompt.id)?.buttons).toEqual([]);
  });

  it('after a restart, withdraws an approval prompt that never reached the chat', async () => {
    const dir = tempDir('hob-withdraw-');
    const first = new MemoryChannel();
    first.onSend = (_target, message) => {
      if (message.text.includes('Allow **bash**')) throw new Error('platform down');
    };
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'touch never' }, id: 'toolu_w' }] }]);
    hob = await startTestGateway(first, model, { dir });
    first.say(OWNER, 'touch never');
    await eventually(() => hob !== undefined && new SqliteOutbox(hob.db).counts().pending === 1); // the prompt, waiting for a retry
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();

    const second = new MemoryChannel();
    const resumed = new ScriptedModel([{ text: 'Shall I try again?' }]);
    hob = await startTestGateway(second, resumed, { dir });
    hob.gateway.delivery.start(20);
    await find(second, 'Shall I try again?');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(chat(second).some((m) => m.text.includes('Allow **bash**'))).toBe(false);
    expect(JSON.stringify(resumed.requests[0]?.messages.at(-1))).toContain('Not run: hob restarted');
  });

  it('on shutdown stops a running shell command, says nothing more in the chat, and the next start picks the run up', async () => {
    const dir = tempDir('hob-shutdown-');
    const first = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'sleep 30; touch finished' } }] }]);
    hob = await startTestGateway(first, model, { dir });
    first.say(OWNER, 'take your time');
    first.press(OWNER, await find(first, 'sleep 30'), 'Allow once');
    await first.waitFor(() => chat(first).some((m) => m.text.includes('⏳')), 5000, 'the command running');
    const shown = chat(first).length;
    await hob.gateway.stop();
    hob.db.close();
    expect(chat(first).slice(shown)).toEqual([]);

    const resumed = new ScriptedModel([{ text: 'The command was cut short by a restart; shall I run it again?' }]);
    hob = await startTestGateway(new MemoryChannel(), resumed, { dir });
    await eventually(() => resumed.requests.length === 1);
    expect(JSON.stringify(resumed.requests[0]?.messages.at(-1))).toContain('[cancelled (hob is shutting down); the command and its child processes were stopped]');
    expect(spawnSync('pgrep', ['-f', 'sleep 30; touch finished']).status).toBe(1); // no such process left
  });

  // 50 at once prove what more would (bench/gateway.ts times 100 and 1,000 conversations).
  // Twenty conversations at once, each with nine messages queued behind its run, interleaved
  // with the others' (bench/gateway.ts measures the gateway with many more).
  it('answers 20 conversations × 10 messages, each reply in its own chat and in order', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([]);
    const echo = (request: { messages: { content: { type: string; text?: string }[] }[] }) => ({
      text: `re: ${request.messages.at(-1)?.content.find((b) => b.type === 'text')?.text ?? ''}`,
    });
    for (let i = 0; i < 200; i++) model.push(echo);
    hob = await startTestGateway(channel, model, { busyMode: 'queue', maxQueue: 20 });
    const people = Array.from({ length: 20 }, (_, i) => ({ id: String(1000 + i), name: `P${i}` }));
    hob.gateway.access.isAllowedUser = () => true;
    for (let round = 0; round < 10; round++) for (const person of people) channel.say(person, `${person.id}-${round}`);
    await channel.waitFor(() => people.every((p) => channel.chat(`dm-${p.id}`).length === 10), 60_000, 'all replies');
    for (const person of people) {
      expect(channel.chat(`dm-${person.id}`).map((m) => m.text)).toEqual(Array.from({ length: 10 }, (_, round) => `re: ${person.id}-${round}`));
    }
  }, 90_000);
});
