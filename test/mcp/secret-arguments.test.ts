import '../support/env.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runQuery } from '../../src/engine/run-query.js';
import { McpManager } from '../../src/mcp/manager.js';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { startFakeMcpHttp, type FakeMcpHttp } from '../fakes/mcp-http.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { collect, ofType, queryParams, tempDir } from '../support/engine.js';
import { filesystemServer } from '../support/mcp-servers.js';

const managers: McpManager[] = [];
const fakes: FakeMcpHttp[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** A home with secrets the README names by place and by pattern, and one ordinary file. */
function homeWithSecrets(): string {
  const home = tempDir('hob-mcp-secrets-');
  for (const dir of ['.ssh', 'certs', 'project']) mkdirSync(join(home, dir));
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'SSH PRIVATE KEY');
  writeFileSync(join(home, 'certs', 'server.pem'), 'PEM PRIVATE KEY');
  writeFileSync(join(home, 'certs', 'ca.crt'), 'public certificate');
  writeFileSync(join(home, 'project', '.env'), 'DATABASE_PASSWORD=hunter2');
  writeFileSync(join(home, '.npmrc'), '//registry.npmjs.org/:_authToken=NPM-TOKEN');
  writeFileSync(join(home, 'notes.txt'), 'ordinary notes');
  return home;
}

const SECRET_TEXT = /PRIVATE KEY|hunter2|NPM-TOKEN/;

/** Runs the scripted calls through the agent loop in full_auto, with hob's real secret matcher; returns each result. */
async function callAll(registry: ToolRegistry, home: string, calls: { name: string; input: unknown }[][]): Promise<string[]> {
  const checker = createPermissionChecker({ mode: 'full_auto', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] }, { workspace: join(home, 'workspace'), home });
  const model = new ScriptedModel([...calls.map((toolCalls) => ({ toolCalls })), { text: 'ok' }]);
  const params = queryParams(model, [], { maxTurns: calls.length + 1, context: { isSensitivePath: (path, resolved) => checker.isSensitivePath(path, resolved) } });
  const events = await collect(runQuery({ ...params, tools: registry, permissions: { evaluate: checker.evaluate, rememberAlways: () => undefined } }));
  return ofType(events, 'user_message')
    .flatMap((event) => event.message.content)
    .flatMap((block) => (block.type === 'tool_result' ? [String(block.content)] : []));
}

async function serve(servers: ConstructorParameters<typeof McpManager>[0]['servers']) {
  const registry = new ToolRegistry();
  const manager = new McpManager({ servers, callTimeoutSeconds: 20, registry, connection: { backoffMs: 50, maxBackoffMs: 2_000 } });
  managers.push(manager);
  await manager.start();
  return registry;
}

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

  it('a listing tool answers without the names of secrets (directory_tree, list_directory, search_files)', async () => {
    const home = homeWithSecrets();
    const registry = await serve({ files: filesystemServer(home) });
    const [tree, listing, found] = await callAll(registry, home, [
      [{ name: 'mcp__files__directory_tree', input: { path: home } }],
      [{ name: 'mcp__files__list_directory', input: { path: home } }],
      [{ name: 'mcp__files__search_files', input: { path: home, pattern: '**/*' } }],
    ]);
    const names = (nodes: { name: string; children?: unknown[] }[]): string[] =>
      nodes.flatMap((node) => [node.name, ...names((node.children ?? []) as { name: string; children?: unknown[] }[])]);
    expect(names(JSON.parse(tree ?? '[]') as { name: string }[]).sort()).toEqual(['ca.crt', 'certs', 'notes.txt', 'project']);
    expect(listing?.split('\n').sort()).toEqual(['[DIR] certs', '[DIR] project', '[FILE] notes.txt']);
    expect(found).toContain(join(home, 'notes.txt'));
    expect(found).toContain(join(home, 'certs', 'ca.crt'));
    for (const text of [tree, listing, found]) expect(text).not.toMatch(/\.ssh|id_rsa|server\.pem|\.env|\.npmrc/);
  });
});
