import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** The "/" menu in Telegram: everyone sees the everyday commands, the owner also sees theirs. */

let fake: FakeTelegram | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  await fake?.close();
  hob = undefined;
  fake = undefined;
});

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const names = (commands: unknown[]) => commands.map((entry) => (entry as { command: string }).command);

describe('Telegram command menus', () => {
  it("shows /model, /permissions and /pairing in the owner's DM only", async () => {
    fake = await startFakeTelegram({ botUsername: 'hob_bot' });
    const owner = { id: Number(OWNER.id), first_name: OWNER.name };
    const friend = { id: Number(FRIEND.id), first_name: FRIEND.name };
    fake.sendText(owner, { id: owner.id, type: 'private' }, 'hi');
    fake.sendText(friend, { id: friend.id, type: 'private' }, 'hi');
    hob = await startTestGateway(createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: silent }), new ScriptedModel([{ text: 'hello' }, { text: 'hello' }]));
    await fake.waitFor(() => fake?.callsOf('setMyCommands').length === 2, 8000, 'both menus');

    const everyone = names(fake.commandMenu(friend.id, friend.id));
    expect(everyone).toEqual(expect.arrayContaining(['new', 'stop', 'status', 'approve']));
    expect(everyone).not.toContain('model');
    expect(everyone).not.toContain('permissions');
    expect(everyone).not.toContain('pairing');
    expect(names(fake.commandMenu(owner.id, owner.id))).toEqual(expect.arrayContaining(['new', 'model', 'permissions', 'pairing']));
  });
});
