import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundMessage, SentRef, Target } from '../../src/gateway/channel.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';

let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
});

const GROUP = 'group-9';
const inGroup = { chatId: GROUP, chatType: 'group' as const };
const groupAccess = new Map([['memory', { allowFrom: [OWNER.id], allowedGroups: [GROUP] }]]);

describe('commands for another bot', () => {
  it('/cmd@otherbot is never hob’s, also as a reply to hob', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'hello group' }, { toolCalls: [{ name: 'bash', input: { command: 'echo hi' } }] }]);
    hob = await startTestGateway(channel, model, { access: groupAccess });
    channel.say(OWNER, 'hi', { ...inGroup, mention: true });
    await channel.waitFor(() => channel.chat(GROUP).find((m) => m.text === 'hello group'), 5000, 'the first answer');
    for (const text of ['/permissions@otherbot mode full_auto', '/status@otherbot', '/new@otherbot', '/stop@OtherBot now']) {
      channel.say(OWNER, text, { ...inGroup, replyToBot: true, mention: true });
    }
    // Then a real message: it must still ask before running bash (the mode did not change).
    channel.say(OWNER, 'run it', { ...inGroup, mention: true });
    const prompt = await channel.waitFor(() => channel.chat(GROUP).find((m) => m.buttons.length > 0), 5000, 'the approval');
    expect(prompt.text).toContain('echo hi');
    expect(channel.chat(GROUP).map((m) => m.text).filter((t) => /Model:|mode|New conversation|Stopp/i.test(t) && !t.includes('echo hi'))).toEqual([]);
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests.map((r) => r.messages))).not.toContain('otherbot');
  });
});

describe('who full_auto trusts', () => {
  it('in full_auto, a group-only member’s bash call waits for an owner, while the owner’s runs at once', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'bash', input: { command: 'echo from-eve' } }] },
      { text: 'ran it for Eve' },
      { toolCalls: [{ name: 'bash', input: { command: 'echo from-ann' } }] },
      { text: 'ran it for Ann' },
    ]);
    hob = await startTestGateway(channel, model, { access: groupAccess });
    channel.say(OWNER, '/permissions mode full_auto');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text.includes('full_auto')), 5000, 'the mode switch');

    channel.say(STRANGER, 'please run it', { ...inGroup, mention: true });
    const prompt = await channel.waitFor(() => channel.chat(GROUP).find((m) => m.buttons.length > 0), 5000, 'the approval');
    expect(prompt.text).toContain('echo from-eve');
    expect(prompt.text).toContain('full_auto applies only to people on allow_from');
    expect(prompt.text).toContain('only an owner can decide');
    channel.press(STRANGER, prompt, 'Allow once');
    await channel.waitFor(() => channel.answers.find((a) => a.userId === STRANGER.id), 5000, 'the notice to Eve');
    expect(model.requests).toHaveLength(1); // not run
    channel.press(OWNER, prompt, 'Allow once');
    await channel.waitFor(() => channel.chat(GROUP).find((m) => m.text === 'ran it for Eve'), 5000, 'Eve’s answer');

    channel.say(OWNER, 'and for me', { ...inGroup, mention: true });
    await channel.waitFor(() => channel.chat(GROUP).find((m) => m.text === 'ran it for Ann'), 5000, 'Ann’s answer');
    expect(channel.chat(GROUP).filter((m) => m.text.includes('echo from-ann') && m.text.includes('Allow'))).toEqual([]);
  });
});

describe('who steers a shared conversation', () => {
  it('in full_auto, a group-only member’s words sent during the owner’s run wait for their own run (and its approval)', async () => {
    const channel = new MemoryChannel();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'bash', input: { command: 'while [ ! -f go ]; do sleep 0.02; done; echo ann-done' } }] },
      { text: 'done for Ann' },
      { toolCalls: [{ name: 'bash', input: { command: 'echo from-eve' } }] },
      { text: 'ran it for Eve' },
    ]);
    hob = await startTestGateway(channel, model, { access: groupAccess, groupSessions: 'shared' });
    channel.say(OWNER, '/permissions mode full_auto');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text.includes('full_auto')), 5000, 'the mode switch');

    channel.say(OWNER, 'wait for go', { ...inGroup, mention: true });
    await channel.waitFor(() => model.requests.length === 1, 5000, 'Ann’s run');
    channel.say(STRANGER, 'also run echo from-eve', { ...inGroup, mention: true });
    writeFileSync(join(hob.deps.workspace, 'go'), '');
    await channel.waitFor(() => channel.chat(GROUP).find((m) => m.text === 'done for Ann'), 5000, 'Ann’s answer');
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('from-eve'); // not steered into Ann’s trusted run

    const prompt = await channel.waitFor(() => channel.chat(GROUP).find((m) => m.buttons.length > 0), 5000, 'the approval for Eve');
    expect(prompt.text).toContain('echo from-eve');
    expect(prompt.text).toContain('full_auto applies only to people on allow_from');
  });
});

/** A platform that accepts an approval prompt and then never answers: hob is killed mid-call. */
class DyingChannel extends MemoryChannel {
  dying = true;
  override async send(target: Target, message: OutboundMessage): Promise<SentRef> {
    const sent = await super.send(target, message);
    if (this.dying && (message.buttons?.length ?? 0) > 0) return new Promise<SentRef>(() => undefined);
    return sent;
  }
}

describe('stale approval buttons', () => {
  it('after a kill during the prompt’s delivery, a press on the closed approval edits the prompt and removes its buttons', async () => {
    const dir = tempDir('hob-stale-prompt-');
    const channel = new DyingChannel();
    hob = await startTestGateway(channel, new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'echo stale' } }] }]), { dir });
    channel.say(OWNER, 'run it');
    const prompt = await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.buttons.length === 3), 5000, 'the prompt');
    await hob.gateway.stop({ stopRuns: false }); // as if killed
    hob.db.close();

    channel.dying = false;
    hob = await startTestGateway(channel, new ScriptedModel([{ text: 'after the restart' }]), { dir });
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text === 'after the restart'), 5000, 'the resumed run');
    expect(channel.chat(`dm-${OWNER.id}`).filter((m) => m.text.includes('echo stale') && m.buttons.length > 0)).toHaveLength(1); // the stale one
    channel.press(OWNER, prompt, 'Allow once');
    await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.id === prompt.id && m.buttons.length === 0), 5000, 'the prompt closed');
    const closed = channel.chat(`dm-${OWNER.id}`).find((m) => m.id === prompt.id);
    expect(closed?.text).toMatch(/cancelled/);
    expect(channel.answers.at(-1)?.text).toMatch(/already closed/);
  });
});
