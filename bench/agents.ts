/**
 * Workers and background tasks (issue 21), with models that answer at once or after a fixed
 * delay, so the figures are hob's own:
 * 1. what an `agent` call costs over a plain tool call (a worker's fresh loop, its row, its prompt);
 * 2. ten workers started in one turn against one, each model request taking 50 ms (wall time);
 * 3. memory per running background task (each waiting on its model).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock } from '../src/core/clock.js';
import { emptyUsage, type Message } from '../src/core/messages.js';
import { unlinkedPeople } from '../src/core/person.js';
import { agentTool } from '../src/engine/agents/agent-tool.js';
import { loadAgentDefinitions } from '../src/engine/agents/definitions.js';
import { noHooks, type PermissionGate } from '../src/engine/ports.js';
import { QueryEngine } from '../src/engine/query-engine.js';
import { runQuery } from '../src/engine/run-query.js';
import { TaskManager } from '../src/engine/tasks/task-manager.js';
import { createLogger } from '../src/logger.js';
import { denyingInteraction } from '../src/policy/types.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from '../src/providers/types.js';
import { openDatabase, type Db } from '../src/store/sqlite/db.js';
import { SqliteOutbox } from '../src/store/sqlite/outbox.js';
import { SqliteTasks } from '../src/store/sqlite/tasks.js';
import { defineTool, ToolRegistry, type AnyTool } from '../src/tools/tool.js';
import { engineDeps } from '../test/support/deps.js';
import { tempDir } from '../test/support/engine.js';
import { collectGarbage, fmt, fmtBytes, median, runIfMain, type BenchResult } from './stats.js';

const RUNS = 400;
const WARMUP = 100;
const MODEL_DELAY_MS = 50;
const TASKS = 50;

const echo = defineTool({ name: 'echo', description: 'Echo text back', input: z.object({ text: z.string() }), readOnly: true, run: async ({ text }) => `echo: ${text}` });
const allowAll: PermissionGate = { evaluate: () => ({ behavior: 'allow', reason: 'bench' }), rememberAlways: () => {} };

/**
 * The conversation's model calls `tool` `calls` times in its first turn, then answers; a
 * worker's (its prompt says so) or a task's answers at once, after `delayMs`; `hang` keeps a
 * task's request open until it is aborted.
 */
class BenchModel implements ProviderClient {
  readonly provider = 'bench';
  readonly model = 'bench-model';
  private nextId = 1;
  constructor(private readonly options: { tool: string; calls: number; delayMs?: number; hang?: boolean }) {}

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    const usage = { ...emptyUsage(), inputTokens: 10, outputTokens: 5 };
    const worker = request.system.includes('a worker started by hob');
    if (worker && this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
    if (this.options.hang) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    const answering = worker || request.messages.at(-1)?.content.some((block) => block.type === 'tool_result');
    if (!answering) {
      const content = Array.from({ length: this.options.calls }, (_, n) => ({ type: 'tool_use' as const, id: `toolu_${this.nextId++}`, name: this.options.tool, input: this.options.tool === 'echo' ? { text: 'ping' } : { description: `look ${n}`, prompt: `look into ${n}` } }));
      yield { type: 'done', message: { role: 'assistant', content }, stopReason: 'tool_use', usage, model: this.model };
      return;
    }
    const message: Message = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
    yield { type: 'done', message, stopReason: 'end_turn', usage, model: this.model };
  }
}

/** One conversation turn (a model call, its tool calls, the answer) on `model`; returns ms per run. */
async function timeTurns(db: Db, dir: string, model: BenchModel, runs: number, warmup: number): Promise<number[]> {
  const tools = new ToolRegistry([echo as unknown as AnyTool]);
  const profile = { provider: model, tools, permissions: allowAll, hooks: noHooks, workspace: dir, maxTurns: 10, maxTokens: 1000, approvalTimeoutSeconds: 30 };
  tools.register(
    agentTool({
      profile: () => profile,
      catalog: loadAgentDefinitions([]),
      tasks: new SqliteTasks(db),
      people: unlinkedPeople,
      clock: systemClock,
      costUsd: () => 0,
      settings: { maxParallel: 10, maxTurns: 5, timeoutSeconds: 60, models: [] },
      runnerId: 'bench',
      today: () => 'today',
    }),
  );
  const once = async () => {
    const started = performance.now();
    const events = runQuery({ ...profile, system: 'bench', messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }], context: { signal: new AbortController().signal, workspace: dir, sessionKey: 'bench:1', userId: 'u1', interaction: denyingInteraction } });
    for await (const _event of events) void _event;
    return performance.now() - started;
  };
  for (let i = 0; i < warmup; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return samples;
}

async function memoryPerTask(dir: string): Promise<number> {
  const deps = engineDeps(new BenchModel({ tool: 'echo', calls: 0, hang: true }), [], join(dir, 'tasks'));
  const manager = new TaskManager({
    tasks: new SqliteTasks(deps.db),
    outbox: new SqliteOutbox(deps.db),
    engine: (key) => new QueryEngine(key, deps),
    people: unlinkedPeople,
    clock: systemClock,
    logger: createLogger({ level: 'silent', destination: 'silent' }),
    settings: { maxRunning: TASKS + 1, timeoutSeconds: 600, maxTokens: 1_000_000 },
  });
  manager.start({ kick: () => {} });
  const chat = { platform: 'bench', chatId: 'c1' };
  // One first, so what every task shares (statements, modules) is not counted.
  manager.create({ prompt: 'warm up', userId: 'u0', sessionKey: 'bench:c0', chat });
  await new Promise((resolve) => setTimeout(resolve, 100));
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  for (let n = 0; n < TASKS; n++) manager.create({ prompt: `task ${n}: watch the build and report`, userId: 'u1', sessionKey: `bench:c${n % 5}`, chat });
  await new Promise((resolve) => setTimeout(resolve, 300));
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  await manager.shutdown(2000);
  deps.db.close();
  return (after - before) / TASKS;
}

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-agents-');
  const db = openDatabase(join(dir, 'hob.db'));
  try {
    const plain = await timeTurns(db, dir, new BenchModel({ tool: 'echo', calls: 1 }), RUNS, WARMUP);
    const agent = await timeTurns(db, dir, new BenchModel({ tool: 'agent', calls: 1 }), RUNS, WARMUP);
    const overheadUs = (median(agent) - median(plain)) * 1000;
    const overheadLine = `agent call over a plain tool call: +${fmt(overheadUs)} µs median (turn with echo ${fmt(median(plain) * 1000)} µs, with a worker ${fmt(median(agent) * 1000)} µs; ${RUNS} runs, instant model)`;
    console.log(overheadLine);
    const one = await timeTurns(db, dir, new BenchModel({ tool: 'agent', calls: 1, delayMs: MODEL_DELAY_MS }), 10, 2);
    const ten = await timeTurns(db, dir, new BenchModel({ tool: 'agent', calls: 10, delayMs: MODEL_DELAY_MS }), 10, 2);
    const parallelLine = `ten workers in one turn vs one (each model request ${MODEL_DELAY_MS} ms): ${fmt(median(ten))} ms vs ${fmt(median(one))} ms wall (${fmt(median(ten) / median(one))}×; run one after another it would be ~10×)`;
    console.log(parallelLine);
    const perTask = await memoryPerTask(dir);
    const memoryLine = `memory per running background task: ${fmtBytes(perTask)} heap (${TASKS} tasks waiting on their model)`;
    console.log(memoryLine);
    return { name: 'agents', summary: [overheadLine, parallelLine, memoryLine] };
  } finally {
    db.close();
  }
}

runIfMain(import.meta.url, run);
