import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpManager } from '../../src/mcp/manager.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { startFakeMcpHttp, type FakeMcpHttp } from '../fakes/mcp-http.js';
import { callAll, homeWithSecrets, SECRET_TEXT } from '../support/mcp-secrets.js';

const managers: McpManager[] = [];
const fakes: FakeMcpHttp[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function serve(servers: ConstructorParameters<typeof McpManager>[0]['servers']) {
  const registry = new ToolRegistry();
  const manager = new McpManager({ servers, callTimeoutSeconds: 20, registry, connection: { backoffMs: 50, maxBackoffMs: 2_000 } });
  managers.push(manager);
  await manager.start();
  return registry;
}

// Over the in-process HTTP fake; what server-filesystem's listing tools answer about the same
// home is checked in mcp-servers.test.ts, whose shared servers serve it too.
describe('MCP arguments are checked whole', () => {
  it('refuses a secret named in a url (file: in any letter case), under any key, nested', async () => {
    const home = homeWithSecrets();
    const fake = await startFakeMcpHttp({ files: home });
    fakes.push(fake);
    const registry = await serve({ docs: { url: fake.url, headers: {}, enabled: true } });
    const results = await callAll(registry, home, [
      [{ name: 'mcp__docs__fetch', input: { url: `file://${join(home, '.ssh', 'id_rsa')}` } }],
      [{ name: 'mcp__docs__fetch', input: { url: `FILE://${join(home, 'certs', 'server.pem')}` } }],
      [{ name: 'mcp__docs__fetch', input: { url: `File://${join(home, 'project', '.env')}` } }],
      [{ name: 'mcp__docs__open', input: { target: join(home, 'certs', 'server.pem') } }],
      [{ name: 'mcp__docs__open', input: { target: '~/.npmrc' } }],
      [{ name: 'mcp__docs__read_document', input: { options: { path: join(home, 'project', '.env') } } }],
      [{ name: 'read_mcp_resource', input: { server: 'docs', uri: `FILE://${join(home, '.ssh', 'id_rsa')}` } }],
      [{ name: 'read_mcp_resource', input: { server: 'docs', uri: `File://${join(home, '.npmrc')}` } }],
      // The same tools still read what is not secret.
      [{ name: 'mcp__docs__fetch', input: { url: `FILE://${join(home, 'notes.txt')}` } }],
      [{ name: 'mcp__docs__read_document', input: { options: { path: join(home, 'certs', 'ca.crt') } } }],
      [{ name: 'mcp__docs__fetch', input: { url: 'https://example.com/.env' } }],
    ]);
    expect(results.slice(0, 8)).toEqual(Array(8).fill(expect.stringMatching(/^Permission denied: .* is a sensitive path and is always denied$/)));
    expect(results.join('\n')).not.toMatch(SECRET_TEXT);
    expect(results.slice(8)).toEqual(['ordinary notes', 'public certificate', 'fetched https://example.com/.env']);
  });

  it('lists resources without the secret files among them', async () => {
    const home = homeWithSecrets();
    const fake = await startFakeMcpHttp({ files: home });
    fakes.push(fake);
    const registry = await serve({ docs: { url: fake.url, headers: {}, enabled: true } });
    const [listed] = await callAll(registry, home, [[{ name: 'list_mcp_resources', input: {} }]]);
    expect(listed).toContain('notes.txt');
    expect(listed).not.toContain('.npmrc');
  });
});
