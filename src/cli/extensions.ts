/** `hob mcp list` and `hob plugins list`: what the extensions look like, without starting hob. */
import type { HobConfig } from '../config/schema.js';
import { loadExtensions } from '../extensions.js';
import { COMMANDS } from '../gateway/commands.js';
import { ToolRegistry } from '../tools/tool.js';

/** Connects to every MCP server (at most `waitMs`), prints each one's state and tools, and closes them. */
export async function runMcpList(config: HobConfig, out: (text: string) => void, waitMs = 30_000): Promise<void> {
  const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set(COMMANDS.map((entry) => entry.command)), mcpConnection: { startTimeoutMs: waitMs } });
  try {
    await extensions.mcp.start();
    out(`${extensions.describeMcp()}\n`);
  } finally {
    await extensions.close();
  }
}

export function runPluginsList(config: HobConfig, out: (text: string) => void): void {
  const extensions = loadExtensions(config, { registry: new ToolRegistry(), reservedCommands: new Set(COMMANDS.map((entry) => entry.command)) });
  out(`${extensions.describePlugins()}\n`);
  const skills = extensions.skills.list();
  out(`\nSkills (${skills.length}): ${skills.map((skill) => `${skill.name} (${skill.origin})`).join(', ') || 'none'}\n`);
  for (const problem of extensions.problems.filter((line) => line.startsWith('skill'))) out(`${problem}\n`);
}
