import type { EngineStatus } from '../engine/query-engine.js';
import type { AccessControl } from './access.js';
import type { ApprovalBroker } from './approvals.js';
import type { BotCommand, ChannelAdapter, InboundMessage, OutboundMessage } from './channel.js';
import type { ChannelChatCommand } from './channel-module.js';
import { isMemoryCommand, MEMORY_COMMANDS, runMemoryCommand } from './commands/memory.js';
import type { Memory } from '../memory/memory.js';
import type { Conversation } from './conversation.js';
import type { PairingService } from './pairing.js';
import { EXTENSION_COMMANDS, EXTENSION_OWNER_ONLY, extensionCommandReply, type ExtensionCommands } from './commands/skills.js';
import { runSessionCommand, SESSION_COMMANDS, type SessionCommandServices } from './commands/sessions.js';
import { TASK_COMMANDS } from './commands/tasks.js';

/** The commands hob registers with each platform's menu. */
export const COMMANDS = [
  { command: 'start', description: 'Say hello and see what hob can do' },
  { command: 'help', description: 'What hob understands' },
  { command: 'new', description: 'Start a fresh conversation' },
  { command: 'stop', description: 'Stop the current run' },
  { command: 'status', description: 'Model, tokens, cost and session' },
  { command: 'usage', description: 'Token and cost details' },
  { command: 'approve', description: 'Approve a pending request: /approve ID' },
  { command: 'deny', description: 'Deny a pending request: /deny ID' },
  { command: 'model', description: 'Show or switch the model (owner)' },
  { command: 'permissions', description: 'Permission mode and your rules: /permissions [mode M | forget N] (owner)' },
  { command: 'pairing', description: 'List or approve pairing codes (owner)' },
  ...MEMORY_COMMANDS,
  { command: 'jobs', description: 'Your reminders and reports: pause, resume, delete' },
  ...TASK_COMMANDS,
  ...EXTENSION_COMMANDS,
  ...SESSION_COMMANDS,
] as const;

/** The names of hob's own commands (the extensions may not take them). */
export const COMMAND_NAMES: ReadonlySet<string> = new Set(COMMANDS.map((entry) => entry.command));

/**
 * issue 23: commands that read or change the conversation's run, history or figures. With
 * several processes they run in the process that runs the conversation (the router hands them
 * on through the inbox); `/stop` is not among them: it reaches a run elsewhere through the
 * shared decisions, at once, even when messages wait in front of it.
 */
export const CONVERSATION_COMMANDS: ReadonlySet<string> = new Set(['new', 'status', 'usage', 'sessions', 'resume', 'compact']);

export const OWNER_ONLY = new Set<string>(['model', 'permissions', 'pairing', ...EXTENSION_OWNER_ONLY]);

/**
 * The command menus for one platform: everyone's leaves out the owners' commands; the owners'
 * DMs show them all. Plugin commands join both, so every menu (and a platform's one `/hob`
 * command with subcommands) knows them.
 */
export function commandMenus(
  plugins: BotCommand[],
  ownerIds: string[],
  /** The chat channels' own commands (after hob's, before plugins'); an owner-only one is in the owners' menu only. */
  channelCommands: readonly ChannelChatCommand[] = [],
): { everyone: BotCommand[]; owners: { userIds: string[]; commands: BotCommand[] } } {
  const entry = ({ command, description }: BotCommand) => ({ command, description });
  const everyone = [...COMMANDS.filter((command) => !OWNER_ONLY.has(command.command)).map(entry), ...channelCommands.filter((command) => !command.ownerOnly).map(entry), ...plugins];
  return { everyone, owners: { userIds: ownerIds, commands: [...COMMANDS.map(entry), ...channelCommands.map(entry), ...plugins] } };
}

export type CommandServices = {
  adapter: ChannelAdapter;
  access: AccessControl;
  broker: ApprovalBroker;
  pairing: PairingService;
  conversation(): Conversation;
  reply(text: string): Promise<void>;
  currentModel(): string;
  switchModel(name: string): Promise<string>;
  /** `/permissions [mode M | forget N|all]`, answered in words. */
  permissions(args: string, userId: string): string;
  /** Long-term memory (issue 8); without it the memory commands say so. */
  memory?: Memory;
  /** Sends a message with buttons to the chat the command came from. */
  send?(message: OutboundMessage): Promise<void>;
  /** `/jobs`: sends the person's jobs with buttons (absent when this hob runs no scheduler). */
  jobs?(): Promise<void>;
  /** Skills, plugin commands and MCP servers, when loaded. */
  extensions?: ExtensionCommands;
  /** `/bg` and `/tasks` (issue 21), absent when this hob runs no background tasks. */
  tasks?(name: 'bg' | 'tasks', args: string): Promise<void>;
  /** The /usage line for the person's background tasks and workers. */
  taskUsage?(): string | undefined;
  /** `/sessions`, `/resume`, `/compact` (issue 13). */
  sessions?: Pick<SessionCommandServices, 'archive' | 'people'>;
  /** issue 23 (several processes): when the conversation's run is in another process, asks it to stop; false when none runs. */
  stopElsewhere?(): boolean;
};

/** Parses `/name args`; returns undefined for plain text. */
export function parseCommand(text: string): { name: string; args: string } | undefined {
  // issue 7: adapters strip hob's own @name; `/cmd@otherbot` is never hob's command.
  const match = /^\/([a-zA-Z0-9_]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] as string).toLowerCase(), args: (match[2] ?? '').trim() };
}

/** Runs a command. Returns false when the name is not a hob command (the model gets the text). */
export async function runCommand(name: string, args: string, message: InboundMessage, services: CommandServices): Promise<boolean> {
  if (!COMMAND_NAMES.has(name)) return false;
  if (OWNER_ONLY.has(name) && !services.access.isOwner(message.platform, message.userId)) {
    await services.reply(`/${name} is only for the owner of this hob.`);
    return true;
  }
  if (isMemoryCommand(name)) {
    if (!services.memory) return services.reply('Memory is not available in this hob.').then(() => true);
    const sender = {
      platform: message.platform,
      userId: message.userId,
      private: message.chatType === 'dm',
      buttons: services.adapter.capabilities.buttons && Boolean(services.send),
      trusted: services.access.isAllowedUser(message.platform, message.userId),
    };
    const reply = runMemoryCommand(services.memory, name, args, sender);
    await (reply.buttons && services.send ? services.send({ text: reply.text, buttons: reply.buttons, plain: true }) : services.reply(reply.text));
    return true;
  }
  if (services.sessions && (await runSessionCommand(name, args, message, { ...services.sessions, conversation: services.conversation, reply: services.reply }))) return true;
  switch (name) {
    case 'start':
    case 'help':
      await services.reply(helpText(services.extensions?.menu() ?? []));
      return true;
    case 'new': {
      const conversation = services.conversation();
      conversation.stop();
      conversation.engine.reset();
      await services.reply('Started a new conversation. I no longer see the earlier messages.');
      return true;
    }
    case 'stop': {
      const { wasRunning, dropped } = services.conversation().stop();
      const droppedNote = dropped ? ` Dropped ${dropped} queued message${dropped === 1 ? '' : 's'}.` : '';
      const runsElsewhere = !wasRunning && services.stopElsewhere?.() === true;
      await services.reply(wasRunning || runsElsewhere ? `Stopping.${droppedNote}` : `Nothing is running.${droppedNote}`);
      return true;
    }
    case 'status':
      await services.reply(statusText(services.conversation().engine.status(), services.conversation().queued));
      return true;
    case 'usage': {
      const tasks = services.taskUsage?.();
      await services.reply(`${usageText(services.conversation().engine.status())}${tasks ? `\n${tasks}` : ''}`);
      return true;
    }
    case 'bg':
    case 'tasks':
      if (services.tasks) await services.tasks(name, args);
      else await services.reply('Background tasks run only under hob start.');
      return true;
    case 'approve':
    case 'deny': {
      if (!args) {
        await services.reply(`Usage: /${name} ID (the id is shown on the approval message).`);
        return true;
      }
      const outcome = await services.broker.decideByText(args.split(/\s+/)[0] as string, name === 'approve' ? 'allow_once' : 'deny', message.platform, message.userId, message.userName, services.adapter);
      await services.reply(outcome);
      return true;
    }
    case 'model':
      await services.reply(args ? await services.switchModel(args) : `Model: ${services.currentModel()}. Switch with /model NAME.`);
      return true;
    case 'permissions':
      await services.reply(services.permissions(args, message.userId));
      return true;
    case 'pairing':
      await services.reply(await services.pairing.command(args, message));
      return true;
    case 'jobs':
      if (services.jobs) await services.jobs();
      else await services.reply('Reminders and reports run only under hob start.');
      return true;
    case 'skill':
    case 'mcp':
      await services.reply(extensionCommandReply(name, services.extensions));
      return true;
  }
  return false;
}

function helpText(plugins: { command: string; description: string }[]): string {
  return [
    "Hi, I'm hob. Talk to me in plain words; I can run commands, read and edit files in my workspace, and fetch web pages.",
    'Before I do anything risky I ask you with buttons: Allow once, Always allow (this exact command or path), or Deny.',
    '',
    ...[...COMMANDS.filter((entry) => entry.command !== 'start'), ...plugins].map((entry) => `/${entry.command} — ${entry.description}`),
  ].join('\n');
}

function statusText(status: EngineStatus, queued: number): string {
  const tokens = status.usage.inputTokens + status.usage.cacheReadTokens + status.usage.cacheWriteTokens;
  return [
    `Model: ${status.model}`,
    `Session: ${status.sessionId} (${status.messages} messages)`,
    `Tokens: ${tokens.toLocaleString('en-US')} in, ${status.usage.outputTokens.toLocaleString('en-US')} out`,
    `Cost: $${status.costUsd.toFixed(4)}`,
    `State: ${status.running ? 'running' : 'idle'}${queued ? `, ${queued} queued` : ''}`,
  ].join('\n');
}

function usageText(status: EngineStatus): string {
  const { usage } = status;
  return [
    `Requests: ${status.requests}`,
    `Input: ${usage.inputTokens.toLocaleString('en-US')} tokens (+${usage.cacheReadTokens.toLocaleString('en-US')} cached, ${usage.cacheWriteTokens.toLocaleString('en-US')} cache writes)`,
    `Output: ${usage.outputTokens.toLocaleString('en-US')} tokens`,
    `Cost: $${status.costUsd.toFixed(4)}`,
  ].join('\n');
}
