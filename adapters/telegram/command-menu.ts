/**
 * The "/" menu Telegram shows: everyone's commands in every chat, the owners' (more) in each
 * owner's DM, as a chat-scoped menu that wins over the default there.
 */
import type { Api } from 'grammy';
import type { BotCommand } from '../../src/gateway/channel.js';
import { MAX_COMMANDS } from './capabilities.js';
import type { TelegramLogger } from './logger.js';
import { describeError } from './outbound.js';


/**
 * Sets both menus. Only the default list's failure is thrown: an owner who never opened a DM
 * with the bot gets "chat not found", which must not cost the others.
 */
export async function setCommandMenu(api: Api, logger: TelegramLogger, everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
  // Telegram refuses a whole menu past 100 commands: hob's own come first, plugins' after.
  const all = owners?.commands ?? everyone;
  if (all.length > MAX_COMMANDS) {
    logger.warn({ left: all.slice(MAX_COMMANDS).map((entry) => entry.command) }, `telegram takes at most ${MAX_COMMANDS} commands; the rest are not in the / menu (they still work typed to hob)`);
  }
  await api.setMyCommands(everyone.slice(0, MAX_COMMANDS).map(telegramCommand));
  if (!owners) return;
  const ownerCommands = owners.commands.slice(0, MAX_COMMANDS).map(telegramCommand);
  for (const userId of owners.userIds) {
    // An owner's DM chat id is their user id.
    const chatId = Number(userId);
    if (!Number.isSafeInteger(chatId)) {
      logger.warn({ method: 'setMyCommands', userId }, 'telegram owner commands skipped: not a Telegram user id');
      continue;
    }
    try {
      await api.setMyCommands(ownerCommands, { scope: { type: 'chat', chat_id: chatId } });
    } catch (error) {
      logger.warn({ method: 'setMyCommands', userId, ...describeError(error) }, 'telegram could not set the owner commands');
    }
  }
}

/** Telegram wants command names without the slash, lower case. */
function telegramCommand({ command, description }: BotCommand): BotCommand {
  return { command: command.replace(/^\//, '').toLowerCase(), description };
}
