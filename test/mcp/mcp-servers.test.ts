import '../support/env.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runQuery } from '../../src/engine/run-query.js';
import { McpManager } from '../../src/mcp/manager.js';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { startFakeMcpHttp, type FakeMcpHttp } from '../fakes/mcp-http.js';
import { answering, collect, ofType, queryParams, tempDir } from '../support/engine.js';
import { callAll, homeWithSecrets } from '../support/mcp-secrets.js';
import { everythingServer, filesystemServer } from '../support/mcp-servers.js';

const managers: McpManager[] = [];
const fakes: FakeMcpHttp[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.close()));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

function manage(servers: ConstructorParameters<typeof McpManager>[0]['servers'], backoffMs = 50, owned = managers) {
  const registry = new ToolRegistry();
  const manager = new McpManager({ servers, callTimeoutSeconds: 20, registry, connection: { backoffMs, maxBackoffMs: 2_000 } });
  owned.push(manager);
  return { manager, registry };
}

/**
 * The stdio servers are started once for the file, by one manager (each start of an npm server
 * is most of a second of CPU): server-everything with a 1-second call limit and a 1-second
 * restart backoff (long enough to see the gap after a kill), server-filesystem over one folder
 * that holds what each test reads — a.txt, notes/, and a home's secrets (.ssh, .hob) beside
 * ordinary notes — and over a second home with the secrets of test/support/mcp-secrets.ts,
 * and a "server" that exits at once. They are started while hob's environment
 * holds a bot token and an API key, as `hob start`'s does: one test asks the server for its
 * environment. What start() and describe() showed is kept for the test about starting,
 * whichever test started them. The test that kills server-everything waits until it is back.
 */
const SECRET_TOKEN = 'sekrit-telegram';
const SECRET_KEY = 'sekrit-anthropic';
const sharedManagers: McpManager[] = [];
afterAll(async () => Promise.all(sharedManagers.map((manager) => manager.close())));
type Shared = { manager: McpManager; registry: ToolRegistry; root: string; secretsHome: string; listedBeforeStart: boolean; describedAtStart: string };
let shared: Promise<Shared> | undefined;
function sharedServers(): Promise<Shared> {
  shared ??= (async () => {
    const root = tempDir('hob-mcp-fs-');
    writeFileSync(join(root, 'a.txt'), 'hello from fs\n');
    mkdirSync(join(root, 'notes'));
    mkdirSync(join(root, '.ssh'));
    writeFileSync(join(root, '.ssh', 'id_rsa'), 'PRIVATE KEY');
    mkdirSync(join(root, '.hob'));
    writeFileSync(join(root, '.hob', 'hob.db'), 'SQLITE DATA');
    writeFileSync(join(root, 'notes.txt'), 'ordinary notes');
    const secretsHome = homeWithSecrets();
    const { manager, registry } = manage(
      {
        broken: { command: process.execPath, args: ['-e', 'process.exit(3)'], env: {}, enabled: true },
        everything: { ...everythingServer(), timeout_seconds: 1 },
        files: filesystemServer(root, secretsHome),
      },
      1_000,
      sharedManagers,
    );
    // Undone after the test that happened to start them (unstubEnvs); the servers keep what they got.
    vi.stubEnv('TELEGRAM_BOT_TOKEN', SECRET_TOKEN);
    vi.stubEnv('ANTHROPIC_API_KEY', SECRET_KEY);
    const started = manager.start();
    // start() hands back at once: nothing is listed yet.
    const listedBeforeStart = registry.names().some((name) => name.startsWith('mcp__everything__'));
    await started;
    return { manager, registry, root, secretsHome, listedBeforeStart, describedAtStart: manager.describe() };
  })();
  return shared;
}

/** The real permission checker in default mode, over a temp workspace. */
function defaultPermissions(workspace: string) {
  const checker = createPermissionChecker(
    { mode: 'default', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] },
    { workspace, home: tempDir(), protectedPaths: [] },
  );
  return { evaluate: checker.evaluate, rememberAlways: () => undefined };
}

function toolResults(events: Awaited<ReturnType<typeof collect>>) {
  return ofType(events, 'user_message').flatMap((event) => event.message.content.filter((block) => block.type === 'tool_result'));
}

describe('MCP servers over stdio (server-everything, server-filesystem)', () => {
  it('lists a server\'s tools as mcp__<server>__<tool> and calls one through the agent loop', async () => {
    const { registry } = await sharedServers();
    expect(registry.names()).toContain('mcp__everything__echo');
    expect(registry.names()).toEqual(expect.arrayContaining(['list_mcp_resources', 'read_mcp_resource']));
    const spec = registry.specs().find((tool) => tool.name === 'mcp__everything__echo');
    expect(spec?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });

    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'hi from hob' } }] }, { text: 'done' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    expect(toolResults(events)).toMatchObject([{ content: 'Echo: hi from hob', isError: false }]);
    // The model saw the MCP tool among its tools.
    expect(model.requests[0]?.tools.map((tool) => tool.name)).toContain('mcp__everything__echo');
  });

  it('refuses an input that does not match the server\'s schema before calling the server', async () => {
    const { registry } = await sharedServers();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 42 } }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    expect(ofType(events, 'tool_refused')).toMatchObject([{ name: 'mcp__everything__echo', reason: 'invalid input' }]);
    expect(ofType(events, 'tool_started')).toHaveLength(0);
    const [result] = toolResults(events);
    expect(result).toMatchObject({ isError: true });
    expect(result?.type === 'tool_result' && result.content).toMatch(/message must be string/);
  });

  it('returns a filesystem path outside the server\'s root as an is_error result', async () => {
    const { registry, root } = await sharedServers();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'mcp__files__read_text_file', input: { path: join(root, 'a.txt') } }, { name: 'mcp__files__read_text_file', input: { path: '/etc/hostname' } }] },
      { text: 'ok' },
    ]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    const [inside, outside] = toolResults(events);
    expect(inside).toMatchObject({ content: 'hello from fs\n', isError: false });
    expect(outside).toMatchObject({ isError: true });
    expect(outside?.type === 'tool_result' && outside.content).toMatch(/outside allowed directories/);
  });

  it('runs read-only tools without asking and asks through the Interaction port before a destructive one', async () => {
    const { registry, root } = await sharedServers();
    const target = join(root, 'notes', 'todo.md');
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'mcp__files__list_directory', input: { path: root } }] },
      { toolCalls: [{ name: 'mcp__files__write_file', input: { path: target, content: 'milk' } }] },
      { toolCalls: [{ name: 'mcp__files__write_file', input: { path: target, content: 'eggs' } }] },
      { text: 'ok' },
    ]);
    const interaction = answering('deny', 'allow_once');
    const base = queryParams(model, [], { context: { interaction, workspace: root } });
    const events = await collect(runQuery({ ...base, tools: registry, permissions: defaultPermissions(root) }));
    // One question per write, none for the listing.
    expect(interaction.asked).toHaveLength(2);
    expect(interaction.asked).toEqual([target, target]);
    const results = toolResults(events);
    expect(results[0]).toMatchObject({ isError: false });
    expect(results[1]).toMatchObject({ isError: true, content: expect.stringMatching(/denied/) });
    expect(results[2]).toMatchObject({ isError: false });
    expect(readFileSync(target, 'utf8')).toBe('eggs');
  });

  it('stops waiting for a call after the server\'s time limit and tells the model', async () => {
    const { registry } = await sharedServers();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', input: { duration: 20, steps: 2 } }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    expect(toolResults(events)).toMatchObject([{ isError: true, content: expect.stringMatching(/did not answer within 1 s/) }]);
    // The server is still usable afterwards.
    const again = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'still here' } }] }, { text: 'ok' }]);
    expect(toolResults(await collect(runQuery({ ...queryParams(again, []), tools: registry })))).toMatchObject([{ content: 'Echo: still here' }]);
  });

  it('keeps hob\'s sensitive paths off limits for an MCP tool\'s path argument', async () => {
    const { registry, root: home } = await sharedServers();
    const checker = createPermissionChecker({ mode: 'full_auto', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] }, { workspace: home, home, protectedPaths: [] });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__files__read_text_file', input: { path: join(home, '.ssh', 'id_rsa') } }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry, permissions: { evaluate: checker.evaluate, rememberAlways: () => undefined } }));
    expect(ofType(events, 'tool_started')).toHaveLength(0);
    expect(toolResults(events)).toMatchObject([{ isError: true, content: expect.stringMatching(/^Permission denied/) }]);
  });

  it('keeps hob\'s secrets and data off limits also in the other path arguments (read_multiple_files, a file:// resource)', async () => {
    const { registry, root: home } = await sharedServers();
    const checker = createPermissionChecker({ mode: 'full_auto', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] }, { workspace: home, home, protectedPaths: [join(home, '.hob', 'hob.db')] });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'mcp__files__read_multiple_files', input: { paths: [join(home, 'notes.txt'), join(home, '.ssh', 'id_rsa')] } }] },
      { toolCalls: [{ name: 'mcp__files__read_multiple_files', input: { paths: [join(home, '.hob', 'hob.db')] } }] },
      { toolCalls: [{ name: 'read_mcp_resource', input: { server: 'files', uri: `file://${join(home, '.ssh', 'id_rsa')}` } }] },
      { toolCalls: [{ name: 'mcp__files__read_multiple_files', input: { paths: [join(home, 'notes.txt')] } }] },
      { text: 'ok' },
    ]);
    const params = queryParams(model, [], { context: { isSensitivePath: (path, resolved) => checker.isSensitivePath(path, resolved) } });
    const events = await collect(runQuery({ ...params, tools: registry, permissions: { evaluate: checker.evaluate, rememberAlways: () => undefined } }));
    const results = toolResults(events).map((block) => (block.type === 'tool_result' ? String(block.content) : ''));
    expect(results.slice(0, 3)).toEqual([expect.stringMatching(/^Permission denied: .*id_rsa/), expect.stringMatching(/^Permission denied: .*hob\.db/), expect.stringMatching(/^Permission denied: file:.*id_rsa/)]);
    expect(results.join('\n')).not.toMatch(/PRIVATE KEY|SQLITE DATA/);
    expect(results[3]).toContain('ordinary notes');
  });

  it('starts a stdio server without hob\'s environment: its tokens and keys never reach the server', async () => {
    // The shared servers were started with SECRET_TOKEN and SECRET_KEY in hob's environment.
    const { registry } = await sharedServers();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__get-env', input: {} }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    const [result] = toolResults(events);
    const text = result?.type === 'tool_result' ? String(result.content) : '';
    expect(text).toContain('PATH');
    expect(text).not.toContain(SECRET_TOKEN);
    expect(text).not.toContain(SECRET_KEY);
  });

  it('answers "unavailable" while a killed server restarts, then works again', async () => {
    // A restart backoff long enough to see the gap (sharedServers: 1 s).
    const { manager, registry } = await sharedServers();
    const server = manager.get('everything');
    const restartsBefore = server?.restarts ?? 0;
    const pid = server?.pid;
    expect(pid).toBeTypeOf('number');
    process.kill(pid as number, 'SIGKILL');
    await vi.waitFor(() => expect(server?.state).toBe('restarting'), { timeout: 5_000, interval: 10 });

    // Still listed (the prompt's tool list does not flap), but the call says why it cannot run.
    const during = await collect(
      runQuery({ ...queryParams(new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'x' } }] }, { text: 'ok' }]), []), tools: registry }),
    );
    expect(toolResults(during)).toMatchObject([{ isError: true, content: expect.stringMatching(/unavailable: it stopped.*restarting/) }]);

    await vi.waitFor(() => expect(server?.state).toBe('ready'), { timeout: 15_000, interval: 20 });
    expect(server?.pid).not.toBe(pid);
    expect(server?.restarts).toBe(restartsBefore + 1);
    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__everything__echo', input: { message: 'back' } }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    expect(toolResults(events)).toMatchObject([{ content: 'Echo: back', isError: false }]);
  });

  it('reports a server that fails to start, skips it, and does not hold back the others', async () => {
    const { manager, registry, listedBeforeStart, describedAtStart } = await sharedServers();
    expect(listedBeforeStart).toBe(false);
    expect(manager.get('broken')?.state).toBe('failed');
    expect(describedAtStart).toMatch(/broken \(stdio\): failed — /);
    expect(describedAtStart).toMatch(/everything \(stdio\): ready\n {2}tools: .*echo/);
    expect(registry.names().some((name) => name.startsWith('mcp__broken__'))).toBe(false);
    expect(registry.names()).toContain('mcp__everything__echo');
  });
});

describe('MCP arguments are checked whole (server-filesystem)', () => {
  it('a listing tool answers without the names of secrets (directory_tree, list_directory, search_files)', async () => {
    const { registry, secretsHome: home } = await sharedServers();
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

describe('MCP servers over streamable HTTP', () => {
  it('connects with the configured headers, calls tools and refreshes on tools/list_changed', async () => {
    const fake = await startFakeMcpHttp();
    fakes.push(fake);
    const { manager, registry } = manage({ notes: { url: fake.url, headers: { authorization: 'Bearer note-token' }, enabled: true } });
    await manager.start();
    expect(fake.headers[0]?.authorization).toBe('Bearer note-token');
    expect(registry.names()).toEqual(expect.arrayContaining(['mcp__notes__add_note', 'mcp__notes__count_notes']));
    expect(registry.get('mcp__notes__count_notes')?.readOnly({})).toBe(true);
    expect(registry.get('mcp__notes__add_note')?.readOnly({ text: 'x' })).toBe(false);

    const model = new ScriptedModel([{ toolCalls: [{ name: 'mcp__notes__add_note', input: { text: 'milk' } }] }, { text: 'ok' }]);
    const events = await collect(runQuery({ ...queryParams(model, []), tools: registry }));
    expect(toolResults(events)).toMatchObject([{ content: 'stored: milk', isError: false }]);

    const specsBefore = registry.specs();
    fake.addTool('weather', 'sunny');
    await vi.waitFor(() => expect(registry.names()).toContain('mcp__notes__weather'), { timeout: 5_000, interval: 10 });
    // Stable order: the old tools keep their places, the new one joins in name order.
    expect(registry.specs().filter((spec) => spec.name !== 'mcp__notes__weather').map((spec) => spec.name)).toEqual(specsBefore.map((spec) => spec.name));
  });
});
