import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { denyingInteraction } from '../../src/policy/types.js';
import type { Tool, ToolContext, ToolOutput } from '../../src/tools/tool.js';

/** A fresh real directory under the OS temp dir (realpath'd, so `pwd` output compares equal). */
export async function makeWorkspace(): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), 'hob-tools-')));
}

export async function removeWorkspace(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export type TestContext = ToolContext & { progressLines: string[] };

export function makeContext(workspace: string, signal: AbortSignal = new AbortController().signal): TestContext {
  const progressLines: string[] = [];
  return {
    signal,
    workspace,
    sessionKey: 'test:chat',
    userId: 'u1',
    interaction: denyingInteraction,
    progress: (text) => progressLines.push(text),
    progressLines,
  };
}

/** Parses the input with the tool's own schema (as the executor does), runs it, and normalises the output. */
export async function runTool<Input>(
  tool: Tool<Input>,
  input: unknown,
  ctx: ToolContext,
): Promise<{ content: string; isError: boolean }> {
  const parsed = tool.input.parse(input);
  const output: ToolOutput = await tool.run(parsed, ctx);
  return typeof output === 'string' ? { content: output, isError: false } : { content: output.content, isError: output.isError ?? false };
}
