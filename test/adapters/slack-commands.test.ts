import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { loadExtensions, type Extensions } from '../../src/extensions.js';
import { createScheduling } from '../../src/scheduler/index.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { startFakeMcpHttp } from '../fakes/mcp-http.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { skillFile, writeTree } from '../extensions/support.js';
import { testMemory } from '../memory/fixture.js';
import { SETTINGS } from '../scheduler/harness.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { slackAdapter } from '../support/slack-testbed.js';
import { migratedDbFile } from '../support/migrated-db.js';

/**
 * The later features' commands through Slack's one slash command: `/hob skill`, a plugin's
 * command, `/hob mcp`, `/hob jobs`, `/hob memory`, `/hob compact` reach the gateway and answer.
 */
const ann = { ...OWNER };
const bob = { ...FRIEND };

let fake: FakeSlack;
let hob: TestGateway | undefined;
let extensions: Extensions | undefined;
let closeNotes: (() => Promise<void>) | undefined;

afterEach(async () => {
  await hob?.close();
  hob = undefined;
  await extensions?.close();
  extensions = undefined;
  await closeNotes?.();
  closeNotes = undefined;
  await fake.close();
});

async function start(model: ScriptedModel): Promise<void> {
  const dir = tempDir('hob-slack-cmd-');
  writeTree(join(dir, 'skills'), { 'plants/SKILL.md': skillFile('plants', 'Check which plants need water', 'Look at plants.md and list the dry ones.') });
  writeTree(join(dir, 'plugins', 'garden'), {
    'plugin.json': JSON.stringify({ name: 'garden', version: '1.0.0', description: 'Plants and watering' }),
    'commands/water.md': '---\ndescription: Plan the watering\n---\nMake a watering plan for: $ARGUMENTS\n',
  });
  const config = parseHobConfig(`data_dir: ${dir}\nmodel: { api_key: test }\nmcp:\n  servers:\n    gone: { command: /nonexistent/mcp-server }\n`, { env: {} });
  extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set() });
  await extensions.mcp.start();
  const scheduling = createScheduling({ store: openSqliteStore(migratedDbFile(join(dir, 'hob.db')), { clock: systemClock }), clock: systemClock, defaultTimezone: 'Europe/Berlin', settings: SETTINGS });
  scheduling.setOwnerCheck((_platform, userId) => userId === OWNER.id);
  const { memory } = testMemory({ dir: tempDir('hob-slack-mem-') });
  fake = await startFakeSlack();
  for (const person of [ann, bob]) fake.person(person);
  hob = await startTestGateway(slackAdapter(fake), model, { dir, extensions, jobs: scheduling.access, memory });
}

const ephemeral = (person: typeof ann, includes: string) => () => fake.ephemeralsFor(person).find((text) => text.includes(includes));

describe('slack: the later features\' /hob subcommands', () => {
  it('/hob skill NAME args and a plugin command go to the model; the answer lands in the DM', async () => {
    const model = new ScriptedModel([{ text: 'The fern is dry.' }, { text: 'Water the roses on Monday.' }]);
    await start(model);
    await fake.slash(ann, dmOf(ann.id), 'skill plants only the balcony');
    await fake.waitFor(() => fake.seen(dmOf(ann.id)).find((message) => message.text.includes('The fern is dry.')), 5000, 'the skill answer');
    const skillRequest = JSON.stringify(model.requests[0]?.messages.at(-1));
    expect(skillRequest).toContain('Look at plants.md and list the dry ones.');
    expect(skillRequest).toContain("The person's request: only the balcony");

    await fake.slash(bob, dmOf(bob.id), 'water the roses');
    await fake.waitFor(() => fake.seen(dmOf(bob.id)).find((message) => message.text.includes('Water the roses')), 5000, 'the plugin command answer');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('Make a watering plan for: the roses');

    // Bare `/hob skill` lists the skills to the person alone; the unknown-subcommand help names the plugin's command.
    await fake.slash(ann, dmOf(ann.id), 'skill');
    expect(await fake.waitFor(ephemeral(ann, 'Skills'), 5000, 'the skill list')).toContain('plants — Check which plants need water');
    await fake.slash(ann, dmOf(ann.id), 'frobnicate');
    expect(await fake.waitFor(ephemeral(ann, 'frobnicate'), 5000, 'the help')).toContain('/hob water');
    await fake.slash(ann, dmOf(ann.id), 'help');
    expect(await fake.waitFor(ephemeral(ann, '/new —'), 5000, 'the help text')).toContain('/water — Plan the watering');
    expect(model.requests).toHaveLength(2);
  });

  it('/hob mcp (owner), /hob jobs, /hob memory and /hob compact answer', async () => {
    await start(new ScriptedModel([]));
    await fake.slash(ann, dmOf(ann.id), 'mcp');
    expect(await fake.waitFor(ephemeral(ann, 'gone'), 5000, 'the MCP servers')).toMatch(/gone \(stdio\): failed/);
    await fake.slash(bob, dmOf(bob.id), 'mcp');
    await fake.waitFor(ephemeral(bob, 'only for the owner'), 5000, 'the refusal');

    await fake.slash(bob, dmOf(bob.id), 'jobs');
    await fake.waitFor(() => fake.seen(dmOf(bob.id)).find((message) => message.text.startsWith('No reminders or reports')), 5000, 'the jobs');

    await fake.slash(bob, dmOf(bob.id), 'remember I water the fern on Sundays');
    await fake.waitFor(ephemeral(bob, 'I will remember that'), 5000, 'the remember confirmation');
    await fake.slash(bob, dmOf(bob.id), 'memory');
    const shown = await fake.waitFor(() => fake.seen(dmOf(bob.id)).find((message) => message.text.includes('I water the fern on Sundays')), 5000, 'the memory list');
    expect(shown.buttons.some((button) => /forget/i.test(button.label))).toBe(true);

    await fake.slash(bob, dmOf(bob.id), 'compact');
    await fake.waitFor(() => fake.ephemeralsFor(bob).find((text) => text === 'There is nothing to compact yet.'), 5000, 'the compaction answer');
  });
});

describe('slack: /hob in a channel', () => {
  it('a command about a conversation points to the thread or the DM (Slack does not say which thread), and nothing reaches the model or the top of the channel', async () => {
    const model = new ScriptedModel([]);
    await start(model);
    await fake.slash(ann, 'C0TEAM', 'stop');
    expect(await fake.waitFor(ephemeral(ann, 'which thread'), 5000, 'the pointer')).toMatch(/\/stop` in the thread instead, or use `\/hob stop` in your DM/);
    await fake.slash(ann, 'C0TEAM', 'skill plants only the balcony');
    await fake.waitFor(ephemeral(ann, '/hob skill'), 5000, 'the pointer for a skill');
    // A command about the person still answers, privately.
    await fake.slash(ann, 'C0TEAM', 'help');
    await fake.waitFor(ephemeral(ann, '/new —'), 5000, 'the help text');
    expect(fake.seen('C0TEAM')).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });
});

describe('slack: an MCP tool asks like bash does', () => {
  it('a writing MCP tool waits for the Allow button; a read-only one runs without asking', async () => {
    // The MCP server over HTTP, in this process (the npm servers are started in test/mcp).
    const notes = await startFakeMcpHttp();
    closeNotes = () => notes.close();
    const config = parseHobConfig(`data_dir: ${tempDir('hob-slack-mcp-data-')}\nmodel: { api_key: test }\n`, { env: {} });
    const registry = new ToolRegistry();
    extensions = loadExtensions({ ...config, mcp: { ...config.mcp, servers: { notes: { url: notes.url, headers: {}, enabled: true } } } }, { registry, reservedCommands: new Set() });
    await extensions.mcp.start();
    await extensions.mcp.ready();
    fake = await startFakeSlack();
    fake.person(ann);
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'mcp__notes__count_notes', input: {} }] },
      { toolCalls: [{ name: 'mcp__notes__add_note', input: { text: 'buy milk' } }] },
      { text: 'Wrote the list.' },
    ]);
    hob = await startTestGateway(slackAdapter(fake), model, { tools: registry.list() });
    const dm = dmOf(ann.id);
    const thread = fake.web.nextTs();
    await fake.dm(ann, 'put milk on my list', { threadTs: thread });
    const prompt = await fake.waitFor(() => fake.seen(dm).find((message) => message.text.includes('mcp__notes__add_note') && message.buttons.length > 0), 8000, 'the approval prompt');
    expect(prompt.text).toContain('buy milk');
    expect(fake.seen(dm).filter((message) => message.buttons.length > 0)).toHaveLength(1); // the count did not ask
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('3 notes');
    expect(notes.notes).toEqual([]);
    await fake.press(ann, dm, prompt.id, 'Allow once');
    await fake.waitFor(() => fake.seen(dm).find((message) => message.text.includes('Wrote the list.')), 8000, 'the answer');
    expect(notes.notes).toEqual(['buy milk']);
  });
});
