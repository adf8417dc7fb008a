/**
 * hob's commands as Discord application commands, registered by bulk overwrite: in each
 * allowed guild (available at once) and globally for DMs. Discord has no per-person menus,
 * so everyone sees the owners' commands too; the gateway refuses them to others, privately.
 */
import { Routes, type REST } from 'discord.js';
import type { BotCommand } from '../../src/gateway/channel.js';
import { MAX_COMMANDS } from './capabilities.js';
import { describeError, type DiscordLogger } from './outbound.js';


/** The string option every hob command has: what a person would type after `/name`. */
export const ARGS_OPTION = 'args';

/** Discord's interaction contexts: a server, the bot's DMs. */
const GUILD = 0;
const BOT_DM = 1;

/**
 * Application command bodies for a bulk overwrite, one per hob command (the gateway's
 * COMMANDS, so new commands appear by themselves). Each takes one optional free-text
 * option, because hob's commands read their arguments as text (`/approve ID`).
 */
export function applicationCommands(commands: BotCommand[], contexts: number[]): Record<string, unknown>[] {
  return commands.map(({ command, description }) => ({
    name: command.replace(/^\//, '').toLowerCase().slice(0, 32),
    description: description.slice(0, 100) || command,
    type: 1,
    contexts,
    integration_types: [0],
    options: [{ type: 3, name: ARGS_OPTION, description: 'What follows the command (an id, a name, a mode…)', required: false }],
  }));
}

/** Per allowed guild (instant there) and globally for DMs; with no guild listed, globally everywhere. */
export function commandScopes(allowedGuilds: string[]): { guildId?: string; contexts: number[] }[] {
  if (allowedGuilds.length === 0) return [{ contexts: [GUILD, BOT_DM] }];
  return [{ contexts: [BOT_DM] }, ...allowedGuilds.map((guildId) => ({ guildId, contexts: [GUILD] }))];
}

/** Overwrites the commands in every scope; one guild that refuses does not cost the others theirs. */
export async function registerCommands(
  rest: REST,
  applicationId: string,
  allowedGuilds: string[],
  logger: DiscordLogger,
  everyone: BotCommand[],
  owners?: { userIds: string[]; commands: BotCommand[] },
): Promise<void> {
  const all = owners?.commands ?? everyone;
  // Discord refuses a whole overwrite past 100 commands: hob's own come first, plugins' after.
  const commands = all.slice(0, MAX_COMMANDS);
  if (all.length > MAX_COMMANDS) {
    logger.warn({ left: all.slice(MAX_COMMANDS).map((entry) => entry.command) }, `discord takes at most ${MAX_COMMANDS} commands; the rest are not in the / menu (they still work typed to hob)`);
  }
  for (const scope of commandScopes(allowedGuilds)) {
    const route = scope.guildId ? Routes.applicationGuildCommands(applicationId, scope.guildId) : Routes.applicationCommands(applicationId);
    try {
      await rest.put(route, { body: applicationCommands(commands, scope.contexts) });
    } catch (error) {
      // One guild that removed hob must not cost the others their commands.
      logger.warn({ method: 'bulkOverwriteCommands', guild: scope.guildId ?? 'global', ...describeError(error) }, 'discord could not register commands');
    }
  }
}
