import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runChat } from '../../src/cli/chat.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { loadExtensions } from '../../src/extensions.js';
import { createLogger } from '../../src/logger.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { engineDeps } from '../support/deps.js';
import { tempDir } from '../support/engine.js';
import { skillFile, writeTree } from '../extensions/support.js';

describe('/skill and plugin commands in hob chat', () => {
  it('runs a skill and a plugin command, and answers an unknown skill without asking the model', async () => {
    const dataDir = tempDir('hob-chat-skill-');
    writeTree(dataDir, {
      'skills/plants/SKILL.md': skillFile('plants', 'Check the plants', 'List the dry plants.'),
      'plugins/garden/plugin.json': JSON.stringify({ name: 'garden', version: '1', description: 'x' }),
      'plugins/garden/commands/water.md': 'Water $ARGUMENTS today.',
    });
    const extensions = loadExtensions(parseHobConfig(`data_dir: ${dataDir}\nmodel: { api_key: test }\n`, { env: {} }), { registry: new ToolRegistry(), reservedCommands: new Set() });
    const model = new ScriptedModel([{ text: 'The fern.' }, { text: 'Watered.' }]);
    const engine = new QueryEngine('console:local', engineDeps(model, [], join(dataDir, 'engine')));
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const chat = runChat({ engine, userId: 'ann', logger: createLogger({ level: 'silent', destination: 'silent' }), approvalTimeoutSeconds: 30, input, output, interactive: false, extensions });
    input.end('/help\n/skill nope\n/skill plants balcony\n/water the roses\n');
    await chat;
    expect(shown).toContain('Plugin commands: /water (From the garden plugin).');
    expect(shown).toMatch(/There is no skill called "nope"/);
    expect(model.requests).toHaveLength(2);
    expect(JSON.stringify(model.requests[0]?.messages.at(-1))).toContain('List the dry plants.');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('Water the roses today.');
  });
});
