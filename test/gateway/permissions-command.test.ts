import { afterEach, describe, expect, it } from 'vitest';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** `/permissions`: the owner sees the mode and their rules, switches the mode, takes rules back. */

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const dm = (channel: MemoryChannel, person = OWNER) => channel.chat(`dm-${person.id}`);
const find = (channel: MemoryChannel, text: string, person = OWNER) =>
  channel.waitFor(() => [...dm(channel, person)].reverse().find((m) => m.text.includes(text)), 5000, `"${text}"`);

describe('/permissions', () => {
  it('lists an "always allow" rule, takes it back, and the same command asks again', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] },
      { text: 'said hi' },
      { toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] },
      { text: 'said hi again' },
    ]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, 'say hi');
    channel.press(OWNER, await find(channel, 'echo hi'), 'Always allow');
    await find(channel, 'said hi');

    channel.say(OWNER, '/permissions');
    const listed = await find(channel, 'Permission mode');
    expect(listed.text).toContain('Permission mode: default');
    expect(listed.text).toContain('1. bash: exactly `echo hi`');

    channel.say(OWNER, '/permissions forget 1');
    expect((await find(channel, 'Taken back')).text).toContain('bash: exactly `echo hi`');
    channel.say(OWNER, '/permissions');
    await find(channel, 'You have no "always allow" rules');

    const before = dm(channel).length;
    channel.say(OWNER, 'say hi again');
    const prompt = await channel.waitFor(() => dm(channel).slice(before).find((m) => m.buttons.some((b) => b.label === 'Allow once')), 5000, 'a new approval prompt');
    expect(prompt.text).toContain('echo hi');
  });

  it('keeps rules, and their taking back, across a restart', async () => {
    const dir = tempDir('hob-perm-restart-');
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'date' } }] }, { text: 'it is late' }]), { dir });
    channel.say(OWNER, 'what time is it');
    channel.press(OWNER, await find(channel, 'date'), 'Always allow');
    await find(channel, 'it is late');
    await hob.close();

    const second = new MemoryChannel();
    hob = await startTestGateway(second, new ScriptedModel([]), { dir });
    second.say(OWNER, '/permissions forget all');
    await find(second, 'Taken back: bash: exactly `date`');
    await hob.close();

    const third = new MemoryChannel();
    hob = await startTestGateway(third, new ScriptedModel([]), { dir });
    third.say(OWNER, '/permissions');
    await find(third, 'You have no "always allow" rules');
  });

  it('switches to plan mode: a shell command is refused without asking, and /permissions says the config differs', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'touch x' } }] }, { text: 'I may not change files now.' }]);
    hob = await startTestGateway(channel, model);
    channel.say(OWNER, '/permissions mode plan');
    expect((await find(channel, 'Permission mode is now plan')).text).toContain('until hob restarts');

    channel.say(OWNER, 'make a file');
    await find(channel, 'I may not change files now.');
    expect(dm(channel).some((m) => m.buttons.length > 0)).toBe(false);
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('plan mode allows only read-only tools');

    channel.say(OWNER, '/permissions');
    expect((await find(channel, 'Permission mode:')).text).toContain('The config says default');
  });

  it('refuses an unknown mode by naming the choices, and refuses a non-owner', async () => {
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel([]));
    channel.say(OWNER, '/permissions mode yolo');
    expect((await find(channel, 'Unknown mode')).text).toContain('default, plan, full_auto');

    channel.say(FRIEND, '/permissions mode full_auto');
    await find(channel, 'only for the owner', FRIEND);
    channel.say(OWNER, '/permissions');
    expect((await find(channel, 'Permission mode:')).text).toContain('Permission mode: default');
  });
});
