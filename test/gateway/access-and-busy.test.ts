import { afterEach, describe, expect, it } from 'vitest';
import { messageText } from '../../src/core/messages.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const settle = (ms = 250) => new Promise((resolve) => setTimeout(resolve, ms));

describe('who may approve, and busy chats', () => {
  it('in an allowed group, a member who is not on the allow list cannot approve their own command; the owner can', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo from eve' } }] }, { text: 'ran it for Eve' }]);
    hob = await startTestGateway(channel, model, {
      access: new Map([['memory', { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: ['group-9'] }]]),
    });
    channel.say(STRANGER, 'please run it', { chatId: 'group-9', chatType: 'group', mention: true });
    const prompt = await channel.waitFor(() => channel.chat('group-9').find((m) => m.buttons.length > 0), 5000, 'the approval');
    expect(prompt.text).toContain('only an owner can decide');
    channel.press(STRANGER, prompt, 'Allow once');
    await channel.waitFor(() => channel.answers.find((a) => a.userId === STRANGER.id), 5000, 'the notice to Eve');
    expect(channel.answers.find((a) => a.userId === STRANGER.id)?.text).toContain('Only an owner can approve this');
    expect(channel.chat('group-9').find((m) => m.id === prompt.id)?.buttons).toHaveLength(3); // still open

    channel.press(OWNER, prompt, 'Allow once');
    await channel.waitFor(() => channel.chat('group-9').find((m) => m.text === 'ran it for Eve'), 5000, 'the answer');
  });

  it('after a restart, a run resumed in a shared group still belongs to the person who asked', async () => {
    const dir = tempDir('hob-shared-resume-');
    const first = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo one' } }] }]);
    hob = await startTestGateway(first, model, { dir, groupSessions: 'shared' });
    first.say(FRIEND, 'run one', { chatId: 'group-3', chatType: 'group', mention: true });
    await first.waitFor(() => first.chat('group-3').find((m) => m.buttons.length > 0), 5000, 'the approval');
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();

    const second = new MemoryChannel();
    const resumed = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo two' } }] }, { text: 'ran two for Bob' }]);
    hob = await startTestGateway(second, resumed, { dir, groupSessions: 'shared' });
    const prompt = await second.waitFor(() => second.chat('group-3').find((m) => m.text.includes('echo two')), 5000, 'the new approval');
    expect(prompt.text).toContain('Asked by');
    second.press(FRIEND, prompt, 'Allow once');
    await second.waitFor(() => second.chat('group-3').find((m) => m.text === 'ran two for Bob'), 5000, 'the answer');
  });

  it('busy_mode interrupt answers the messages sent mid-run in the order they were sent', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ hang: true }, { text: 'answer A' }, { text: 'answer B' }]);
    hob = await startTestGateway(channel, model, { busyMode: 'interrupt' });
    channel.say(OWNER, 'first, slow');
    await channel.waitFor(() => model.requests.length === 1, 5000, 'the first run');
    channel.say(OWNER, 'second');
    channel.say(OWNER, 'third');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text === 'answer B'), 5000, 'both answers');
    const asked = model.requests.slice(1).map((request) => messageText(request.messages.at(-1) ?? { role: 'user', content: [] }));
    expect(asked[0]).toContain('second'); // the abandoned first message is still in front of it
    expect(asked[0]).not.toContain('third');
    expect(asked[1]).toContain('third');
  });

  it('reminds an unknown person of their code, but does not answer every message they send', async () => {
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]));
    for (let i = 0; i < 5; i++) channel.say(STRANGER, `hello ${i}`);
    await channel.waitFor(() => channel.chat(`dm-${STRANGER.id}`).length > 0, 5000, 'the code');
    await settle();
    expect(channel.chat(`dm-${STRANGER.id}`)).toHaveLength(1);
    expect(channel.chat(`dm-${OWNER.id}`).filter((m) => m.text.includes('wants to talk to hob'))).toHaveLength(1);
  });
});
