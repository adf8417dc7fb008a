import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';
import { FRIEND, OWNER, STRANGER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { testMemory } from './fixture.js';

let hob: TestGateway | undefined;
let app: App | undefined;
afterEach(async () => {
  await hob?.close();
  hob = undefined;
  await app?.close();
  app = undefined;
});

const GROUP = 'group-9';
const inGroup = { chatId: GROUP, chatType: 'group' as const, mention: true };

describe('/link is for people hob knows, in a private chat', () => {
  it('a member let in only by an allowed group cannot redeem a code there, and cannot join its issuer', async () => {
    const { memory } = testMemory();
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel(), { memory, access: new Map([['memory', { allowFrom: [OWNER.id], allowedGroups: [GROUP] }]]) });
    memory.save(`memory:${OWNER.id}`, { content: 'Ann: the alarm code is 8812', source: 'tool' });
    const code = memory.people.createLinkCode(`memory:${OWNER.id}`);

    channel.say(STRANGER, `/link ${code}`, inGroup);
    const refused = await channel.waitFor(() => channel.chat(GROUP).at(-1), 5000, 'the answer');
    expect(refused.text).toBe("Linking accounts is only for people on this hob's allow list (allow_from) or paired with it. Ask an owner to add you.");
    channel.say(STRANGER, '/link', inGroup);
    await channel.waitFor(() => channel.chat(GROUP).length === 2, 5000, 'the second answer');
    expect(channel.chat(GROUP).map((message) => message.text).join('\n')).not.toMatch(/\d{6}/);
    expect(memory.personFor(`memory:${GROUP}`, STRANGER.id)).toBe(`memory:${STRANGER.id}`);
    expect(await memory.search(`memory:${STRANGER.id}`, 'alarm code')).toEqual([]);
    // The code was not spent: its issuer's other account still links with it.
    expect(memory.people.redeem(code, 'telegram', '42')).toEqual({ ok: true, personId: `memory:${OWNER.id}` });
  });

  it('someone on allow_from redeems only in a private chat', async () => {
    const { memory } = testMemory();
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel(), { memory, access: new Map([['memory', { allowFrom: [OWNER.id, FRIEND.id], allowedGroups: [GROUP] }]]) });
    const code = memory.people.createLinkCode('telegram:42');
    channel.say(FRIEND, `/link ${code}`, inGroup);
    await channel.waitFor(() => channel.chat(GROUP).at(-1)?.text === 'Send /link CODE to me in a private chat: link codes must stay between us.', 5000, 'the refusal');
    expect(memory.personFor('memory:dm', FRIEND.id)).toBe(`memory:${FRIEND.id}`);
    channel.say(FRIEND, `/link ${code}`);
    await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).at(-1)?.text.startsWith('Linked'), 5000, 'the link');
    expect(memory.personFor('memory:dm', FRIEND.id)).toBe('telegram:42');
  });
});

describe('wrong link codes', () => {
  it('lock a person out also after a restart', () => {
    const dir = tempDir('hob-link-restart-');
    const first = testMemory({ dir });
    const code = first.memory.people.createLinkCode('telegram:42');
    const wrong = code === '123456' ? '654321' : '123456';
    for (let n = 0; n < 5; n++) first.memory.people.redeem(wrong, 'slack', 'U9');
    first.db.close();
    const restarted = testMemory({ dir });
    const fresh = restarted.memory.people.createLinkCode('telegram:42');
    expect(restarted.memory.people.redeem(fresh, 'slack', 'U9')).toEqual({ ok: false, reason: 'Too many wrong codes. Wait an hour, then send /link CODE again with a fresh code.' });
    expect(restarted.memory.personFor('slack:T1', 'U9')).toBe('slack:U9');
  });

  it('kill a code after five wrong tries from anyone, across accounts and platforms', () => {
    const { memory } = testMemory();
    const code = memory.people.createLinkCode('telegram:42');
    const wrong = code === '123456' ? '654321' : '123456';
    // Five accounts, one guess each: none is locked out, but the code is spent.
    for (const [platform, user] of [['slack', 'U1'], ['discord', '7'], ['telegram', '66'], ['slack', 'U2'], ['discord', '8']] as const) {
      expect(memory.people.redeem(wrong, platform, user)).toMatchObject({ ok: false, reason: expect.stringContaining('unknown') });
    }
    expect(memory.people.redeem(code, 'slack', 'U3')).toMatchObject({ ok: false, reason: expect.stringContaining('five wrong tries') });
    expect(memory.personFor('slack:T1', 'U3')).toBe('slack:U3');
    // Its issuer asks for a new one, which works.
    expect(memory.people.redeem(memory.people.createLinkCode('telegram:42'), 'slack', 'U3')).toEqual({ ok: true, personId: 'telegram:42' });
  });
});

describe('/unlink in an open session', () => {
  it("the next model request no longer carries the other person's memory", async () => {
    const dir = tempDir('hob-unlink-');
    const model = new ScriptedModel([{ text: 'one' }, { text: 'two' }]);
    const config = parseHobConfig(`data_dir: ${dir}\nmodel: { api_key: test }\n`, { env: {} });
    app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent' });
    app.memory.save('telegram:42', { content: 'Ann: the safe behind the painting opens with 5521', source: 'tool' });
    expect(app.memory.people.redeem(app.memory.people.createLinkCode('telegram:42'), 'slack', 'U1')).toMatchObject({ ok: true });
    const engine = app.engine('slack:D1');
    const ask = () => ({ userId: 'U1', interaction: answering(), signal: new AbortController().signal, chatType: 'dm' as const });

    await collect(engine.submit('hello', ask()));
    expect(model.requests[0]?.system).toContain('5521');
    expect(app.memory.people.unlink('slack', 'U1')).toEqual({ ok: true, personId: 'slack:U1' });
    await collect(engine.submit('and now?', ask()));
    expect(model.requests[1]?.system).not.toContain('5521');
  });
});
