import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { unlinkedPeople } from '../../src/core/person.js';
import { agentTool, type AgentSettings } from '../../src/engine/agents/agent-tool.js';
import { loadAgentDefinitions, type AgentCatalog } from '../../src/engine/agents/definitions.js';
import { noHooks, type PermissionGate } from '../../src/engine/ports.js';
import { runQuery } from '../../src/engine/run-query.js';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { openDatabase, type Db } from '../../src/store/sqlite/db.js';
import { SqliteTasks } from '../../src/store/sqlite/tasks.js';
import { globTool } from '../../src/tools/glob.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { ToolRegistry, type AnyTool } from '../../src/tools/tool.js';
import { writeFileTool } from '../../src/tools/write-file.js';
import { ScriptedModel, type ScriptedStep } from '../fakes/scripted-model.js';
import { answering, collect, ofType, tempDir } from '../support/engine.js';
import { migratedDbFile } from '../support/migrated-db.js';

const settings: AgentSettings = { maxParallel: 4, maxTurns: 10, timeoutSeconds: 60, models: [] };
const isWorker = (request: ProviderRequest) => request.system.includes('a worker started by hob');
const firstText = (request: ProviderRequest) => {
  const block = request.messages[0]?.content[0];
  return block?.type === 'text' ? block.text : '';
};
const results = (request: ProviderRequest | undefined) =>
  (request?.messages.at(-1)?.content ?? []).flatMap((block) => (block.type === 'tool_result' ? [block] : []));

let db: Db | undefined;
afterEach(() => db?.close());

/** A conversation's loop with the agent tool and real file tools, over a real SQLite file, gated by the real permission checker. */
function setup(model: ScriptedModel, options: { catalog?: AgentCatalog; mode?: 'default' | 'plan' | 'full_auto'; parallel?: number } = {}) {
  const dir = tempDir('hob-agents-');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  db = openDatabase(migratedDbFile(join(dir, 'hob.db')));
  const tasks = new SqliteTasks(db);
  const checker = createPermissionChecker({ mode: options.mode ?? 'default', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [] }, { workspace, home: join(dir, 'home') });
  const permissions: PermissionGate = { evaluate: (query) => checker.evaluate(query), rememberAlways: () => undefined, mode: () => checker.mode() };
  const tools: ToolRegistry = new ToolRegistry([readFileTool, writeFileTool, globTool] as unknown as AnyTool[]);
  const profile = { provider: model, tools, permissions, hooks: noHooks, workspace, maxTurns: 10, maxTokens: 1000, approvalTimeoutSeconds: 30 };
  tools.register(
    agentTool({
      profile: () => profile,
      catalog: options.catalog ?? loadAgentDefinitions([]),
      tasks,
      people: unlinkedPeople,
      clock: systemClock,
      costUsd: () => 0.001,
      settings: { ...settings, maxParallel: options.parallel ?? settings.maxParallel },
      runnerId: 'test-runner',
      today: () => 'Tuesday, 1 December 2026',
    }),
  );
  const interaction = answering('allow_once', 'allow_once', 'allow_once');
  const run = (prompt: string) =>
    collect(
      runQuery({
        ...profile,
        system: 'the conversation',
        messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
        context: { signal: new AbortController().signal, workspace, sessionKey: 'memory:42', userId: 'u1', interaction },
      }),
    );
  return { dir, workspace, tasks, interaction, run };
}

describe('the agent tool', () => {
  it('runs three agent calls of one turn at once, each worker seeing only its prompt, and returns their answers as tool results', async () => {
    let started = 0;
    let release: () => void = () => undefined;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    const worker: ScriptedStep = (request) => {
      started += 1;
      if (started === 3) release();
      // Each worker's answer waits until all three are running: one at a time would never finish.
      return { text: `found for ${firstText(request)}`, pauseAt: 0, resume: allStarted };
    };
    const model = new ScriptedModel([
      {
        toolCalls: ['alpha', 'beta', 'gamma'].map((topic) => ({ name: 'agent', input: { description: `check ${topic}`, prompt: `look into ${topic}` } })),
      },
      worker,
      worker,
      worker,
      { text: 'all three are done' },
    ]);
    const { run, tasks } = setup(model);
    const events = await run('the secret word is swordfish; check alpha, beta and gamma');

    const workerRequests = model.requests.filter(isWorker);
    expect(workerRequests).toHaveLength(3);
    for (const request of workerRequests) {
      expect(request.messages).toHaveLength(1);
      expect(JSON.stringify(request)).not.toContain('swordfish');
      expect(request.tools.map((tool) => tool.name)).not.toContain('agent');
    }
    expect(workerRequests.map(firstText).sort()).toEqual(['look into alpha', 'look into beta', 'look into gamma']);
    const answers = results(model.requests.at(-1));
    expect(answers.map((block) => block.content)).toEqual([
      expect.stringMatching(/^\[worker: completed · 0 tool uses · [\d,]+ tokens · [\d.]+ s\]\nfound for look into alpha$/),
      expect.stringContaining('found for look into beta'),
      expect.stringContaining('found for look into gamma'),
    ]);
    expect(ofType(events, 'assistant_message').at(-1)?.message.content).toEqual([{ type: 'text', text: 'all three are done' }]);
    const rows = tasks.open('worker');
    expect(rows).toHaveLength(0);
    expect(tasks.spentBy('memory:u1')).toMatchObject({ workers: 3 });
  });

  it('refuses a worker that asks to start a worker, in words it can act on', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'agent', input: { description: 'outer', prompt: 'do it' } }] },
      { toolCalls: [{ name: 'agent', input: { description: 'inner', prompt: 'do it again' } }] },
      (request) => ({ text: `inner said: ${results(request)[0]?.content ?? ''}` }),
      { text: 'done' },
    ]);
    const { run } = setup(model);
    await run('go');
    expect(model.requests.filter(isWorker)).toHaveLength(2);
    const outer = results(model.requests.at(-1))[0];
    expect(outer?.content).toContain('inner said: Refused: you run as a worker or a background task, and cannot start workers');
  });

  it('keeps a worker without named tools to reading: its write is refused and nothing is written', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'agent', input: { description: 'tidy', prompt: 'write notes.txt' } }] },
      { toolCalls: [{ name: 'write_file', input: { path: 'notes.txt', content: 'x' } }] },
      (request) => ({ text: results(request)[0]?.content ?? '' }),
      { text: 'done' },
    ]);
    const { run, workspace, interaction } = setup(model);
    const events = await run('go');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    expect(interaction.asked).toEqual([]);
    expect(results(model.requests.at(-1))[0]?.content).toContain('read-only worker');
    // The refused call shows in the caller's progress under the worker's name.
    expect(ofType(events, 'tool_refused')).toEqual([expect.objectContaining({ name: 'write_file', worker: 'worker' })]);
  });

  it('lets a worker given write_file write, asking the same person first, with the approval naming the worker', async () => {
    const catalog = definitions({ 'scribe.md': '---\nname: scribe\ndescription: Writes files\ntools: [write_file]\n---\nWrite what you are asked.' });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'agent', input: { description: 'write', prompt: 'write notes.txt', agent: 'scribe' } }] },
      { toolCalls: [{ name: 'write_file', input: { path: 'notes.txt', content: 'hello' } }] },
      { text: 'written' },
      { text: 'done' },
    ]);
    const asked: { worker?: string; requesterId: string }[] = [];
    const { run, workspace, interaction } = setup(model, { catalog });
    const confirm = interaction.confirm;
    interaction.confirm = async (request, signal) => {
      asked.push({ worker: request.worker, requesterId: request.requesterId });
      return confirm(request, signal);
    };
    const events = await run('go');
    expect(asked).toEqual([{ worker: 'scribe', requesterId: 'u1' }]);
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(true);
    // The worker's tool list is only what its definition names.
    expect(model.requests.filter(isWorker)[0]?.tools.map((tool) => tool.name)).toEqual(['write_file']);
    expect(ofType(events, 'tool_started').map((event) => [event.worker, event.name])).toEqual([[undefined, 'agent'], ['scribe', 'write_file']]);
  });

  it('refuses a definition whose permission_mode is looser than the caller’s, and a tool the caller lacks', async () => {
    const catalog = definitions({ 'bold.md': '---\nname: bold\ndescription: Does anything\npermission_mode: full_auto\n---\nGo.' });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'agent', input: { description: 'bold', prompt: 'x', agent: 'bold' } },
          { name: 'agent', input: { description: 'shell', prompt: 'x', tools: ['bash'] } },
        ],
      },
      { text: 'ok' },
    ]);
    const { run } = setup(model, { catalog });
    await run('go');
    expect(model.requests.filter(isWorker)).toHaveLength(0);
    const [bold, shell] = results(model.requests.at(-1));
    expect(bold).toMatchObject({ isError: true, content: expect.stringContaining('permission_mode full_auto, looser than this conversation’s default'.replace('’', "'")) });
    expect(shell).toMatchObject({ isError: true, content: expect.stringContaining('cannot use bash') });
  });

  it('holds calls past the per-person limit until a slot is free', async () => {
    let running = 0;
    let most = 0;
    const worker: ScriptedStep = () => {
      running += 1;
      most = Math.max(most, running);
      return { text: 'ok', pauseAt: 0, resume: new Promise((resolve) => setTimeout(resolve, 20)).then(() => (running -= 1)) };
    };
    const calls = [1, 2, 3].map((n) => ({ name: 'agent', input: { description: `n${n}`, prompt: `p${n}` } }));
    const model = new ScriptedModel([{ toolCalls: calls }, worker, worker, worker, { text: 'done' }]);
    const { run } = setup(model, { parallel: 2 });
    await run('go');
    expect(most).toBe(2);
    expect(results(model.requests.at(-1)).every((block) => !block.isError)).toBe(true);
  });
});

function definitions(files: Record<string, string>): AgentCatalog {
  const dir = tempDir('hob-agent-defs-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const catalog = loadAgentDefinitions([{ origin: 'yours', dir }]);
  expect(catalog.problems).toEqual([]);
  return catalog;
}
