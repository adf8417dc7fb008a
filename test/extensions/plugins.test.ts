import '../support/env.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { startFakeMcpHttp, type FakeMcpHttp } from '../fakes/mcp-http.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';
import { skillFile, writeTree } from './support.js';

let app: App | undefined;
let mcp: FakeMcpHttp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  await mcp?.close();
  mcp = undefined;
});

/** A plugin with one of everything; its MCP server is the in-process fake over HTTP (test/mcp starts the npm ones). */
function gardenPlugin(marker: string, mcpUrl: string) {
  return {
    'plugin.json': JSON.stringify({
      name: 'garden',
      version: '1.2.0',
      description: 'Plants and watering',
      hooks: { pre_tool_use: [{ type: 'command', command: 'sh ${PLUGIN_DIR}/guard.sh', matcher: 'write_file' }] },
      mcp_servers: { garden: { url: mcpUrl } },
    }),
    'skills/plants/SKILL.md': skillFile('plants', 'Check which plants need water', 'Look at plants.md.'),
    'commands/water.md': '---\ndescription: Plan the watering\n---\nMake a watering plan for: $ARGUMENTS\n',
    'guard.sh': `touch ${marker}; echo "no writing in the garden" >&2; exit 2\n`,
  };
}

async function startApp(dataDir: string, model: ScriptedModel, extraConfig = '') {
  const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n${extraConfig}`, { env: {} });
  app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent' });
  return app;
}

describe('plugins', () => {
  it('contributes a skill, a command, a hook and an MCP server', async () => {
    const dataDir = tempDir('hob-plugin-');
    const marker = join(dataDir, 'hook-ran');
    mcp = await startFakeMcpHttp();
    writeTree(join(dataDir, 'plugins', 'garden'), gardenPlugin(marker, mcp.url));
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'mcp__garden__count_notes', input: {} }, { name: 'write_file', input: { path: 'x.txt', content: 'x' } }] },
      { text: 'ok' },
    ]);
    const hob = await startApp(dataDir, model);
    const { extensions } = hob;

    expect(extensions.describePlugins()).toMatch(/^garden 1\.2\.0: enabled\n {2}Plants and watering\n {2}1 skill; commands \/water; 1 hook; MCP garden$/);
    expect(extensions.skills.get('plants')?.origin).toBe('plugin garden');
    expect(extensions.expand('water', 'the roses')).toEqual({ kind: 'prompt', text: 'Make a watering plan for: the roses' });
    expect(extensions.menu()).toEqual([{ command: 'water', description: 'Plan the watering' }]);

    await extensions.mcp.ready();
    const events = await collect(hob.engine('console:local').submit('go', { userId: 'ann', interaction: answering('allow_once'), signal: new AbortController().signal }));
    const results = events.flatMap((event) => (event.type === 'user_message' ? event.message.content : [])).filter((block) => block.type === 'tool_result');
    expect(results[0]).toMatchObject({ isError: false, content: '3 notes' });
    expect(results[1]).toMatchObject({ isError: true, content: expect.stringContaining('no writing in the garden') });
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(join(hob.config.tools.workspace, 'x.txt'))).toBe(false);
  });

  it('reports a broken manifest with the reason and loads the rest', async () => {
    const dataDir = tempDir('hob-plugin-');
    writeTree(join(dataDir, 'plugins'), {
      'broken/plugin.json': JSON.stringify({ name: 'broken', description: 'no version' }),
      'typo/plugin.json': JSON.stringify({ name: 'typo', version: '1', description: 'x', skils: [] }),
      'notjson/plugin.json': '{ name: ',
      'empty/README.md': 'no manifest',
      'fine/plugin.json': JSON.stringify({ name: 'fine', version: '0.1.0', description: 'Works' }),
      'fine/commands/hello.md': 'Say hello to $ARGUMENTS',
    });
    const hob = await startApp(dataDir, new ScriptedModel());
    const text = hob.extensions.describePlugins();
    expect(text).toMatch(/^broken: broken — .*broken\/plugin\.json: field "version": expected a version/m);
    expect(text).toMatch(/^typo: broken — .*field "\(manifest\)": unknown key\(s\) skils/m);
    expect(text).toMatch(/^notjson: broken — .*is not valid JSON/m);
    expect(text).toMatch(/^empty: broken — .*plugin\.json is missing/m);
    expect(text).toMatch(/^fine 0\.1\.0: enabled/m);
    expect(hob.extensions.expand('hello', 'Ann')).toEqual({ kind: 'prompt', text: 'Say hello to Ann' });
    expect(hob.extensions.problems).toHaveLength(4);
  });

  it('is turned off and on by the config, whatever its manifest says', async () => {
    const dataDir = tempDir('hob-plugin-');
    writeTree(join(dataDir, 'plugins'), {
      'loud/plugin.json': JSON.stringify({ name: 'loud', version: '1', description: 'On by default' }),
      'loud/commands/shout.md': 'SHOUT $ARGUMENTS',
      'quiet/plugin.json': JSON.stringify({ name: 'quiet', version: '1', description: 'Off by default', enabled: false }),
      'quiet/commands/whisper.md': 'whisper $ARGUMENTS',
    });
    let hob = await startApp(dataDir, new ScriptedModel());
    expect(hob.extensions.expand('shout', 'hi')).toBeDefined();
    expect(hob.extensions.expand('whisper', 'hi')).toBeUndefined();
    expect(hob.extensions.describePlugins()).toMatch(/quiet 1: disabled — off by default; add it to plugins.enabled/);
    await hob.close();

    hob = await startApp(dataDir, new ScriptedModel(), 'plugins: { enabled: [quiet], disabled: [loud] }\n');
    expect(hob.extensions.expand('shout', 'hi')).toBeUndefined();
    expect(hob.extensions.expand('whisper', 'hi')).toEqual({ kind: 'prompt', text: 'whisper hi' });
  });

  it('may not take a command hob already has', async () => {
    const dataDir = tempDir('hob-plugin-');
    writeTree(join(dataDir, 'plugins'), {
      'grabby/plugin.json': JSON.stringify({ name: 'grabby', version: '1', description: 'Takes /new' }),
      'grabby/commands/new.md': 'mine',
    });
    const hob = await startApp(dataDir, new ScriptedModel());
    expect(hob.extensions.describePlugins()).toMatch(/grabby 1: broken — its command \/new is already taken/);
    expect(hob.extensions.expand('new', '')).toBeUndefined();
  });
});
