/** `hob mcp list` and `hob plugins list`: what the extensions look like, without starting hob. */
import type { HobConfig } from '../config/schema.js';
import { loadExtensions } from '../extensions.js';
import { COMMAND_NAMES } from '../gateway/commands.js';
import { ToolRegistry } from '../tools/tool.js';

/** Connects to every MCP server (at most `waitMs`), prints each one's state and tools, and closes them. */
export async function runMcpList(config: HobConfig, out: (text: string) => void, waitMs = 30_000): Promise<void> {
  const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: COMMAND_NAMES, mcpConnection: { startTimeoutMs: waitMs } });
  try {
    await extensions.mcp.start();
    out(`${extensions.describeMcp()}\n`);
  } finally {
    await extensions.close();
  }
}

export function runPluginsList(config: HobConfig, out: (text: string) => void): void {
  const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: COMMAND_NAMES });
  out(`${extensions.describePlugins()}\n`);
  const skills = extensions.skills.list();
  out(`\nSkills (${skills.length}): ${skills.map((skill) => `${skill.name} (${skill.origin})`).join(', ') || 'none'}\n`);
  for (const problem of extensions.problems.filter((line) => line.startsWith('skill'))) out(`${problem}\n`);
}

/**
 * `hob ask` answers one question and exits, so it gives MCP servers a moment to list their
 * tools first (`hob start` never waits: its servers join as they come up).
 */
export async function waitForMcp(ready: Promise<void>, waitMs = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
  clearTimeout(timer);
}
