import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { COMMANDS } from '../../src/gateway/commands.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { loadExtensions, type Extensions } from '../../src/extensions.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { skillFile, writeTree } from '../extensions/support.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/** `/skill NAME args` and a plugin's command on Telegram and Discord: in the menus, and run. */

let hob: TestGateway | undefined;
let telegram: FakeTelegram | undefined;
let discord: DiscordBed | undefined;
let extensions: Extensions | undefined;

afterEach(async () => {
  await hob?.close();
  await telegram?.close();
  await discord?.close();
  await extensions?.close();
  hob = undefined;
  telegram = undefined;
  discord = undefined;
  extensions = undefined;
});

function gardenExtensions(): Extensions {
  const dir = tempDir('hob-ext-cmd-');
  writeTree(join(dir, 'skills'), { 'plants/SKILL.md': skillFile('plants', 'Check which plants need water', 'Look at plants.md and list the dry ones.') });
  writeTree(join(dir, 'plugins', 'garden'), {
    'plugin.json': JSON.stringify({ name: 'garden', version: '1.0.0', description: 'Plants and watering' }),
    'commands/water.md': '---\ndescription: Plan the watering\n---\nMake a watering plan for: $ARGUMENTS\n',
  });
  const config = parseHobConfig(`data_dir: ${dir}\nmodel: { api_key: test }\n`, { env: {} });
  extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set() });
  return extensions;
}

const lastRequest = (model: ScriptedModel, index: number) => JSON.stringify(model.requests[index]?.messages.at(-1));
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('extension commands on Telegram and Discord', () => {
  it('Telegram: the menu shows /skill and the plugin command; both reach the model', async () => {
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    const fake = telegram;
    const friend = { id: Number(FRIEND.id), first_name: FRIEND.name };
    const model = new ScriptedModel([{ text: 'The fern is dry.' }, { text: 'Water on Monday.' }]);
    hob = await startTestGateway(createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: silent }), model, { extensions: gardenExtensions() });
    await fake.waitFor(() => fake.callsOf('setMyCommands').length >= 1, 8000, 'the menu');
    const menu = fake.commandMenu(friend.id, friend.id).map((entry) => (entry as { command: string }).command);
    expect(menu).toEqual(expect.arrayContaining(['skill', 'water']));

    fake.sendText(friend, { id: friend.id, type: 'private' }, '/skill plants only the balcony');
    await fake.waitFor(() => fake.chat(friend.id).find((message) => message.text.includes('The fern is dry.')), 8000, 'the skill answer');
    expect(lastRequest(model, 0)).toContain('Look at plants.md and list the dry ones.');
    fake.sendText(friend, { id: friend.id, type: 'private' }, '/water the roses');
    await fake.waitFor(() => fake.chat(friend.id).find((message) => message.text.includes('Water on Monday.')), 8000, 'the plugin command answer');
    expect(lastRequest(model, 1)).toContain('Make a watering plan for: the roses');
  });

  it('Telegram: a menu past the 100 commands Telegram takes keeps hob\'s own and drops the plugins\' overflow', async () => {
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    const fake = telegram;
    const adapter = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: silent });
    hob = await startTestGateway(adapter, new ScriptedModel([]));
    await fake.waitFor(() => fake.callsOf('setMyCommands').length >= 1, 8000, 'the first menu');
    const plugins = Array.from({ length: 90 }, (_, index) => ({ command: `plugin_${index}`, description: `Plugin command ${index}` }));
    await adapter.setCommands?.([...COMMANDS, ...plugins]);
    const menu = fake.commandsFor().map((entry) => (entry as { command: string }).command);
    expect(menu).toHaveLength(100);
    expect(menu.slice(0, COMMANDS.length)).toEqual(COMMANDS.map((entry) => entry.command));
  });

  it('Discord: /skill and the plugin command are registered application commands, and run', async () => {
    discord = await discordBed();
    const { fake } = discord;
    const model = new ScriptedModel([{ text: 'The fern is dry.' }, { text: 'Water on Monday.' }]);
    hob = await startTestGateway(discord.adapter, model, { extensions: gardenExtensions() });
    await fake.waitFor(() => fake.commands.has('global'), 8000, 'the command registration');
    expect((fake.commands.get('global') ?? []).map((command) => command.name)).toEqual(expect.arrayContaining(['skill', 'water']));

    const dm = fake.dmChannelOf(OWNER);
    fake.slash(OWNER, dm, 'skill', 'plants only the balcony');
    await fake.waitFor(() => fake.botMessages(dm).some((message) => message.content.includes('The fern is dry.')), 8000, 'the skill answer');
    expect(lastRequest(model, 0)).toContain('Look at plants.md and list the dry ones.');
    fake.slash(OWNER, dm, 'water', 'the roses');
    await fake.waitFor(() => fake.botMessages(dm).some((message) => message.content.includes('Water on Monday.')), 8000, 'the plugin command answer');
    expect(lastRequest(model, 1)).toContain('Make a watering plan for: the roses');
  });
});
