/**
 * What the agent loop itself costs per model turn, with a model that answers instantly and a
 * trivial read-only tool: each run is two turns (one tool call, then the answer).
 * 1. runQuery alone (the loop, tool batching, permission check, input validation, events);
 * 2. QueryEngine.submit over a real SQLite file (adds the message appends and usage rows).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock } from '../src/core/clock.js';
import type { AgentEvent } from '../src/core/events.js';
import { noHooks, type PermissionGate } from '../src/engine/ports.js';
import { QueryEngine, type EngineDeps } from '../src/engine/query-engine.js';
import { runQuery, type QueryParams } from '../src/engine/run-query.js';
import { denyingInteraction } from '../src/policy/types.js';
import { SqliteConversations } from '../src/store/sqlite/conversations.js';
import { openDatabase } from '../src/store/sqlite/db.js';
import { defineTool, ToolRegistry } from '../src/tools/tool.js';
import { tempDir } from '../test/support/engine.js';
import { InstantModel } from './instant-model.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const LOOP_RUNS = 2_000;
const ENGINE_RUNS = 1_000;
const WARMUP_RUNS = 500;
const TURNS_PER_RUN = 2;
/** The engine starts a fresh session this often, so history length stays realistic. */
const ENGINE_SESSION_LENGTH = 10;

const echo = defineTool({
  name: 'echo',
  description: 'Echo text back',
  input: z.object({ text: z.string() }),
  readOnly: true,
  run: async ({ text }) => `echo: ${text}`,
});

/** Allows everything without recording (test/support's gate keeps every query in memory). */
const allowAll: PermissionGate = {
  evaluate: () => ({ behavior: 'allow', reason: 'bench' }),
  rememberAlways: () => {},
};

async function drain(events: AsyncIterable<AgentEvent>): Promise<number> {
  let turns = 0;
  for await (const event of events) if (event.type === 'done') turns = event.turns;
  return turns;
}

/** Per-turn µs of `runs` timed runs of `once`, after `WARMUP_RUNS` untimed ones. */
async function timePerTurn(runs: number, once: () => Promise<number>, between: () => void = () => {}): Promise<number[]> {
  for (let i = 0; i < WARMUP_RUNS; i++) {
    between();
    await once();
  }
  const perTurnUs: number[] = [];
  for (let i = 0; i < runs; i++) {
    between();
    const started = performance.now();
    const turns = await once();
    const elapsedUs = (performance.now() - started) * 1000;
    if (turns !== TURNS_PER_RUN) throw new Error(`expected a ${TURNS_PER_RUN}-turn run, got ${turns} turns`);
    perTurnUs.push(elapsedUs / turns);
  }
  return perTurnUs;
}

async function loopOnly(workspace: string): Promise<number[]> {
  const params: QueryParams = {
    provider: new InstantModel('echo'),
    system: 'You are a benchmark.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'say ping' }] }],
    tools: new ToolRegistry([echo]),
    permissions: allowAll,
    hooks: noHooks,
    maxTurns: 10,
    maxTokens: 1000,
    approvalTimeoutSeconds: 300,
    context: { signal: new AbortController().signal, workspace, sessionKey: 'bench:1', userId: 'u1', interaction: denyingInteraction },
  };
  return timePerTurn(LOOP_RUNS, () => drain(runQuery(params)));
}

async function withEngine(dir: string): Promise<number[]> {
  const db = openDatabase(join(dir, 'hob.db'));
  try {
    const deps: EngineDeps = {
      provider: new InstantModel('echo'),
      tools: new ToolRegistry([echo]),
      permissions: allowAll,
      hooks: noHooks,
      conversations: new SqliteConversations(db, systemClock),
      systemPrompt: () => 'You are a benchmark.',
      costUsd: () => 0,
      workspace: dir,
      maxTurns: 10,
      maxTokens: 1000,
      approvalTimeoutSeconds: 300,
    };
    const engine = new QueryEngine('bench:engine', deps);
    const signal = new AbortController().signal;
    let submitted = 0;
    return await timePerTurn(
      ENGINE_RUNS,
      () => drain(engine.submit('say ping', { userId: 'u1', interaction: denyingInteraction, signal })),
      () => {
        if (++submitted % ENGINE_SESSION_LENGTH === 0) engine.reset();
      },
    );
  } finally {
    db.close();
  }
}

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-loop-');
  try {
    const loop = await loopOnly(dir);
    const loopLine = `loop overhead per turn (runQuery): median ${fmt(median(loop))} µs, p99 ${fmt(percentile(loop, 0.99))} µs (${LOOP_RUNS} runs × ${TURNS_PER_RUN} turns)`;
    console.log(loopLine);
    const engine = await withEngine(dir);
    const engineLine = `engine turn incl. SQLite appends (QueryEngine): median ${fmt(median(engine))} µs, p99 ${fmt(percentile(engine, 0.99))} µs (${ENGINE_RUNS} runs × ${TURNS_PER_RUN} turns)`;
    console.log(engineLine);
    return { name: 'loop overhead', summary: [loopLine, engineLine] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
