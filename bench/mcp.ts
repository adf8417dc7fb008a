/**
 * MCP costs: (1) `hob start` → first Telegram poll with two stdio MCP servers configured
 * (server-everything and server-filesystem), beside the same start without them — the
 * servers connect in the background, so the poll must not wait for them; (2) what one MCP
 * tool call adds over a built-in tool, through the agent loop with an instant scripted
 * model: the JSON Schema check, the JSON-RPC round trip over stdio and the result
 * flattening.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { runQuery } from '../src/engine/run-query.js';
import { McpManager } from '../src/mcp/manager.js';
import { defineTool, ToolRegistry, type AnyTool } from '../src/tools/tool.js';
import { startFakeAnthropic } from '../test/fakes/anthropic.js';
import { ScriptedModel } from '../test/fakes/scripted-model.js';
import { startFakeTelegram } from '../test/fakes/telegram/index.js';
import { queryParams, tempDir } from '../test/support/engine.js';
import { cleanEnv, writeConfig } from '../test/support/hob-process.js';
import { everythingServer, mcpServerScript } from '../test/support/mcp-servers.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const START_RUNS = 7;
const CALLS = 300;
const root = join(import.meta.dirname, '..');

async function startToPoll(withMcp: boolean): Promise<number> {
  const dir = tempDir('hob-bench-mcp-');
  const model = await startFakeAnthropic({ apiKey: 'test' });
  const telegram = await startFakeTelegram({ botUsername: 'hob_bench_bot' });
  const mcp = withMcp
    ? `mcp:
  servers:
    everything: { command: "${process.execPath}", args: ["${mcpServerScript('@modelcontextprotocol/server-everything')}", "stdio"] }
    files: { command: "${process.execPath}", args: ["${mcpServerScript('@modelcontextprotocol/server-filesystem')}", "${dir}"] }
`
    : '';
  const config = writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-bench, api_key: test, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ["100"] }
${mcp}`,
  );
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/cli.js', '--config', config, 'start'], { cwd: root, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await Promise.race([
      telegram.waitForCall('getUpdates', () => true, 20_000),
      exited.then(() => Promise.reject(new Error(`hob start exited before polling: ${stderr}`))),
    ]);
    return performance.now() - started;
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await telegram.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Milliseconds per turn of "call the tool, then answer", for one tool. */
async function timeCalls(registry: ToolRegistry, name: string, input: unknown): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < CALLS + 20; i++) {
    const model = new ScriptedModel([{ toolCalls: [{ name, input }] }, { text: 'ok' }]);
    const started = performance.now();
    for await (const event of runQuery({ ...queryParams(model, []), tools: registry })) {
      if (event.type === 'tool_finished' && event.isError) throw new Error(`${name} failed: ${event.content}`);
    }
    if (i >= 20) samples.push(performance.now() - started); // the first calls warm up JIT and pipes
  }
  return samples;
}

async function callOverhead(): Promise<{ builtin: number[]; mcp: number[] }> {
  const echo = defineTool({
    name: 'echo',
    description: 'Echo a message',
    input: z.strictObject({ message: z.string() }),
    readOnly: true,
    run: async ({ message }) => `Echo: ${message}`,
  }) as unknown as AnyTool;
  const registry = new ToolRegistry([echo]);
  const manager = new McpManager({ servers: { everything: everythingServer() }, callTimeoutSeconds: 30, registry });
  await manager.start();
  try {
    const builtin = await timeCalls(registry, 'echo', { message: 'hello' });
    const mcp = await timeCalls(registry, 'mcp__everything__echo', { message: 'hello' });
    return { builtin, mcp };
  } finally {
    await manager.close();
  }
}

export async function run(): Promise<BenchResult> {
  const plain: number[] = [];
  const withMcp: number[] = [];
  for (let i = 0; i < START_RUNS; i++) {
    plain.push(await startToPoll(false));
    withMcp.push(await startToPoll(true));
  }
  const startLine = `hob start → first Telegram poll with 2 stdio MCP servers: median ${fmt(median(withMcp))} ms, max ${fmt(Math.max(...withMcp))} ms (without MCP: median ${fmt(median(plain))} ms; ${START_RUNS} runs each)`;
  console.log(startLine);

  const { builtin, mcp } = await callOverhead();
  const overhead = median(mcp) - median(builtin);
  const callLine = `MCP tool call (server-everything echo over stdio) through the agent loop: median ${fmt(median(mcp))} ms, p90 ${fmt(percentile(mcp, 0.9))} ms vs built-in ${fmt(median(builtin))} ms → +${fmt(overhead)} ms per call (${CALLS} calls each)`;
  console.log(callLine);
  return { name: 'mcp', summary: [startLine, callLine] };
}

runIfMain(import.meta.url, run);
