/**
 * The extension commands in chat: `/skill NAME args` and plugin commands become the prompt
 * the model gets; `/mcp` (owner) shows the MCP servers. The gateway asks `expand` before it
 * treats a message as a command, so an expanded command is queued like any message.
 */
import type { CommandExpansion } from '../../extensions.js';

/** What the gateway needs from the extensions (src/extensions.ts provides it). */
export type ExtensionCommands = {
  expand(name: string, args: string): CommandExpansion | undefined;
  describeMcp(): string;
  /** Plugin commands, for the platforms' menus (or the subcommands of one `/hob` command where a platform has that). */
  menu(): { command: string; description: string }[];
};

export const EXTENSION_COMMANDS = [
  { command: 'skill', description: 'Run a skill: /skill NAME what you want (no name: the list)' },
  { command: 'mcp', description: 'MCP servers, their state and tools (owner)' },
] as const;

export const EXTENSION_OWNER_ONLY = ['mcp'] as const;

/** `/mcp` and a `/skill` that reached runCommand (no extensions loaded): the reply text. */
export function extensionCommandReply(name: 'skill' | 'mcp', extensions: ExtensionCommands | undefined): string {
  if (!extensions) return name === 'mcp' ? 'No MCP servers are configured.' : 'There are no skills in this hob.';
  switch (name) {
    case 'mcp':
      return extensions.describeMcp();
    case 'skill':
      return extensions.expand('skill', '')?.text ?? 'There are no skills in this hob.';
  }
}
