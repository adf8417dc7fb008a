import '../support/env.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';
import { mcpServerScript } from '../support/mcp-servers.js';
import { startFakeAnthropic } from '../fakes/anthropic.js';
import { startFakeMcpHttp } from '../fakes/mcp-http.js';
import { skillFile, writeTree } from '../extensions/support.js';

/** The bundled CLI (dist/, built by the global setup): it must find the repository's skills too. */
describe('hob mcp list / hob plugins list', () => {
  // The server that is up is the HTTP fake (in this process): server-everything, a process of
  // its own, costs about as much CPU as the hob it serves. The ask case below runs it.
  it('shows each MCP server with its state and tools, a broken one with the reason', async () => {
    const notes = await startFakeMcpHttp();
    try {
      const dir = tempDir('hob-cli-mcp-');
      const config = writeConfig(
        dir,
        `data_dir: ${dir}/data
model: { api_key: test }
mcp:
  servers:
    notes: { url: "${notes.url}" }
    gone: { command: /nonexistent/mcp-server }
`,
      );
      const hob = spawnHob(['--config', config, 'mcp', 'list'], cleanEnv());
      expect(await hob.exited).toBe(0);
      const output = hob.output();
      expect(output).toMatch(/^notes \(http\): ready\n {2}tools: .*\badd_note\b/m);
      expect(output).toMatch(/^gone \(stdio\): failed — .*ENOENT/m);
    } finally {
      await notes.close();
    }
  });

  it('lists plugins with what they bring, and the skills including the bundled ones', async () => {
    const dir = tempDir('hob-cli-plugins-');
    writeTree(join(dir, 'data', 'plugins'), {
      'garden/plugin.json': JSON.stringify({ name: 'garden', version: '1.0.0', description: 'Plants' }),
      'garden/skills/plants/SKILL.md': skillFile('plants', 'Check the plants', 'body'),
      'garden/commands/water.md': 'Water $ARGUMENTS',
      'broken/plugin.json': '{',
    });
    const config = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { api_key: test }\n`);
    const hob = spawnHob(['--config', config, 'plugins', 'list'], cleanEnv());
    expect(await hob.exited).toBe(0);
    const output = hob.output();
    expect(output).toMatch(/^broken: broken — .*not valid JSON/m);
    expect(output).toMatch(/^garden 1\.0\.0: enabled\n {2}Plants\n {2}1 skill; commands \/water$/m);
    expect(output).toMatch(/^Skills \(\d+\): .*plants \(plugin garden\).*research \(bundled\).*summarize \(bundled\)/m);
  });

  it('hob ask gives MCP servers a moment, so a one-off question can use their tools', async () => {
    const fake = await startFakeAnthropic({ apiKey: 'test' });
    try {
      fake.push({ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'from ask' } }] }, { text: 'It echoed.' });
      const dir = tempDir('hob-cli-ask-mcp-');
      const everything = mcpServerScript('@modelcontextprotocol/server-everything');
      const config = writeConfig(
        dir,
        `data_dir: ${dir}/data
model: { provider: anthropic, api_key: test, base_url: ${fake.baseUrl}, retry: { max_attempts: 1 } }
mcp:
  servers:
    everything: { command: "${process.execPath}", args: ["${everything}", "stdio"] }
`,
      );
      const hob = spawnHob(['--config', config, 'ask', 'echo', 'something'], cleanEnv());
      hob.child.stdin.end();
      expect(await hob.exited).toBe(0);
      expect(hob.output()).toContain('It echoed.');
      expect(fake.requests[0]?.body.tools?.map((tool) => tool.name)).toContain('mcp__everything__echo');
      expect(JSON.stringify(fake.requests[1]?.body.messages)).toContain('Echo: from ask');
    } finally {
      await fake.close();
    }
  });
});
