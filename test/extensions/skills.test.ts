import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { loadExtensions } from '../../src/extensions.js';
import { bundledSkillsDir, loadSkills } from '../../src/skills/catalog.js';
import { skillTool } from '../../src/skills/skill-tool.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, queryParams, tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { skillFile, writeTree } from './support.js';

let app: App | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await app?.close();
  await hob?.close();
  app = undefined;
  hob = undefined;
});

describe('skill discovery', () => {
  it('ships summarize and research, and finds them from the source tree', () => {
    const catalog = loadSkills([{ origin: 'bundled', dir: bundledSkillsDir() ?? 'missing' }]);
    expect(catalog.problems).toEqual([]);
    expect(catalog.get('summarize')?.description).toMatch(/link|file/i);
    expect(catalog.get('research')?.body).toMatch(/web_search[\s\S]*web_fetch[\s\S]*Sources/);
  });

  it('takes bundled, then plugin, then your own skills, a later one replacing an earlier one of the same name', () => {
    const root = tempDir('hob-skills-');
    writeTree(root, {
      'bundled/summarize/SKILL.md': skillFile('summarize', 'Bundled summary', 'bundled body'),
      'bundled/research/SKILL.md': skillFile('research', 'Bundled research', 'research body'),
      'plugin/summarize/SKILL.md': skillFile('summarize', 'Plugin summary', 'plugin body'),
      'plugin/plants/SKILL.md': skillFile('plants', 'Water the plants', 'plants body'),
      'yours/summarize/SKILL.md': skillFile('summarize', 'My summary', 'my body'),
    });
    const catalog = loadSkills([
      { origin: 'bundled', dir: join(root, 'bundled') },
      { origin: 'plugin garden', dir: join(root, 'plugin') },
      { origin: 'yours', dir: join(root, 'yours') },
    ]);
    expect(catalog.list().map((skill) => `${skill.name}:${skill.origin}`)).toEqual(['plants:plugin garden', 'research:bundled', 'summarize:yours']);
    expect(catalog.get('summarize')?.body).toBe('my body');
    expect(catalog.overrides).toEqual(['summarize (plugin garden) replaces the one from bundled', 'summarize (yours) replaces the one from plugin garden']);
  });

  it('reports a broken front matter naming the file and the field, and keeps the other skills', () => {
    const root = tempDir('hob-skills-');
    writeTree(root, {
      'good/SKILL.md': skillFile('good', 'Fine', 'body'),
      'badname/SKILL.md': skillFile('Bad_Name', 'x', 'body'),
      'nodesc/SKILL.md': '---\nname: nodesc\n---\nbody\n',
      'flag/SKILL.md': skillFile('flag', 'Has a bad flag', 'body', 'user_invocable: maybe\n'),
      'nofront/SKILL.md': 'just text\n',
    });
    const catalog = loadSkills([{ origin: 'yours', dir: root }]);
    expect(catalog.list().map((skill) => skill.name)).toEqual(['good']);
    expect(catalog.problems).toEqual([
      expect.stringMatching(/badname\/SKILL\.md: front matter field "name": expected a kebab-case name/),
      expect.stringMatching(/flag\/SKILL\.md: front matter field "user_invocable": expected true or false/),
      expect.stringMatching(/nodesc\/SKILL\.md: front matter field "description": expected a one-line description/),
      expect.stringMatching(/nofront\/SKILL\.md: no front matter/),
    ]);
  });
});

describe('skills in a conversation', () => {
  it('lists only names and descriptions in the system prompt; the skill tool returns the full text', async () => {
    const dataDir = tempDir('hob-skill-app-');
    writeTree(join(dataDir, 'skills'), { 'plants/SKILL.md': skillFile('plants', 'Check which plants need water', 'Look at plants.md and list the dry ones.') });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'skill', input: { name: 'plants' } }] }, { text: 'Done.' }]);
    const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n`, { env: {} });
    app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent' });
    const events = await collect(app.engine('console:local').submit('water?', { userId: 'ann', interaction: answering(), signal: new AbortController().signal }));

    const system = model.requests[0]?.system ?? '';
    expect(system).toContain('- plants: Check which plants need water');
    expect(system).toContain('- summarize: ');
    expect(system).not.toContain('Look at plants.md');
    const finished = events.find((event) => event.type === 'tool_finished');
    expect(finished).toMatchObject({ name: 'skill', isError: false, content: expect.stringContaining('Look at plants.md and list the dry ones.') });
  });

  it('answers an unknown skill name with the names there are', async () => {
    const catalog = loadSkills([{ origin: 'bundled', dir: bundledSkillsDir() ?? 'missing' }]);
    const tool = skillTool(() => catalog);
    const output = await tool.run({ name: 'nope' }, { ...queryParams(new ScriptedModel(), []).context, progress: () => undefined });
    expect(output).toMatchObject({ isError: true, content: expect.stringMatching(/no skill called "nope".*research.*summarize/) });
  });

  it('/skill NAME args runs the skill: the model gets its instructions and the request', async () => {
    const dataDir = tempDir('hob-skill-chat-');
    writeTree(join(dataDir, 'skills'), {
      'plants/SKILL.md': skillFile('plants', 'Check which plants need water', 'Look at plants.md and list the dry ones.'),
      'internal/SKILL.md': skillFile('internal', 'For hob only', 'secret steps', 'user_invocable: false\n'),
    });
    const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n`, { env: {} });
    const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set() });
    const channel = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'The fern is dry.' }]);
    hob = await startTestGateway(channel, model, { extensions });
    const dm = () => channel.chat(`dm-${OWNER.id}`);

    channel.say(OWNER, '/skill plants only the balcony');
    await channel.waitFor(() => dm().find((m) => m.text.includes('The fern is dry.')), 5000, 'the answer');
    const sent = JSON.stringify(model.requests[0]?.messages.at(-1));
    expect(sent).toContain('Run the \\"plants\\" skill');
    expect(sent).toContain('Look at plants.md and list the dry ones.');
    expect(sent).toContain("The person's request: only the balcony");

    channel.say(OWNER, '/skill internal');
    expect((await channel.waitFor(() => dm().find((m) => m.text.includes('for hob')), 5000, 'the refusal')).text).toMatch(/cannot be run with \/skill/);
    channel.say(OWNER, '/skill');
    const list = await channel.waitFor(() => dm().find((m) => m.text.startsWith('Skills')), 5000, 'the list');
    expect(list.text).toContain('plants — Check which plants need water');
    expect(list.text).not.toContain('internal');
    expect(model.requests).toHaveLength(1);
  });

  it('/mcp shows the owner each MCP server and its state; others are told it is the owner\'s', async () => {
    const dataDir = tempDir('hob-mcp-chat-');
    const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\nmcp:\n  servers:\n    gone: { command: /nonexistent/mcp-server }\n`, { env: {} });
    const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set() });
    await extensions.mcp.start();
    const channel = new MemoryChannel();
    hob = await startTestGateway(channel, new ScriptedModel(), { extensions });
    channel.say(OWNER, '/mcp');
    const shown = await channel.waitFor(() => channel.chat(`dm-${OWNER.id}`).find((m) => m.text.startsWith('gone')), 5000, 'the server list');
    expect(shown.text).toMatch(/^gone \(stdio\): failed — /);
    channel.say(FRIEND, '/mcp');
    await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).find((m) => m.text.includes('only for the owner')), 5000, 'the refusal');
    await extensions.close();
  });
});
