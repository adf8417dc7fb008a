/**
 * MCP costs: (1) `hob start` → first Telegram poll with two stdio MCP servers configured
 * (server-everything and server-filesystem), beside the same start without them — the
 * servers connect in the background, so the poll must not wait for them; (2) what one MCP
 * tool call adds over a built-in tool, through the agent loop with an instant scripted
 * model: the JSON Schema check, the JSON-RPC round trip over stdio and the result
 * flattening.
 */
import { z } from 'zod';
import { runQuery } from '../src/engine/run-query.js';
import { McpManager } from '../src/mcp/manager.js';
import { defineTool, ToolRegistry, type AnyTool } from '../src/tools/tool.js';
import { ScriptedModel } from '../test/fakes/scripted-model.js';
import { queryParams } from '../test/support/engine.js';
import { everythingServer, mcpServerScript } from '../test/support/mcp-servers.js';
import { firstPoll, spawnHobStart, withStartFakes, writeStartConfig } from './hob-process.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const START_RUNS = 7;
const CALLS = 300;

function startToPoll(withMcp: boolean): Promise<number> {
  return withStartFakes('hob-bench-mcp-', async (fakes) => {
    const mcp = withMcp
      ? `mcp:
  servers:
    everything: { command: "${process.execPath}", args: ["${mcpServerScript('@modelcontextprotocol/server-everything')}", "stdio"] }
    files: { command: "${process.execPath}", args: ["${mcpServerScript('@modelcontextprotocol/server-filesystem')}", "${fakes.dir}"] }
`
      : '';
    const hob = spawnHobStart(writeStartConfig(fakes, mcp));
    try {
      await firstPoll(hob, fakes.telegram);
      return performance.now() - hob.startedAt;
    } finally {
      await hob.stop();
    }
  });
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
