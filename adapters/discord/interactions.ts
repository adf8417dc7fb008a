/**
 * What people press and type at hob on Discord: a button on hob's message becomes a
 * ButtonPress, an application command an InboundMessage answered privately. Both are
 * acknowledged at once, as Discord wants within 3 seconds.
 */
import { MessageFlags, type ButtonInteraction, type ChatInputCommandInteraction } from 'discord.js';
import type { ButtonPress, InboundMessage } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { ARGS_OPTION } from './command-menu.js';
import { placeOf } from './normalize.js';
import { describeError, MAX_MESSAGE_LENGTH, type DiscordLogger } from './outbound.js';

/** discord.js's spelling of NO_PINGS, for the replies it builds itself. */
const NO_PINGS = { parse: [], repliedUser: false };

/** Whoever pressed or typed, by the name the server shows. */
function nameOf(interaction: ButtonInteraction | ChatInputCommandInteraction): string {
  const member = interaction.member;
  const nick = member && 'displayName' in member ? member.displayName : undefined;
  return nick ?? interaction.user.globalName ?? interaction.user.username;
}

/**
 * A button press, acknowledged at once (Discord wants an answer within 3 seconds, the
 * gateway may take longer): the press is a deferred update, and the gateway's notice goes to
 * the presser alone as an ephemeral follow-up.
 */
export function buttonPress(interaction: ButtonInteraction, logger: DiscordLogger): ButtonPress {
  const acknowledged = interaction.deferUpdate().then(
    () => true,
    (error: unknown) => {
      logger.warn({ method: 'deferUpdate', ...describeError(error) }, 'discord could not acknowledge a button press');
      return false;
    },
  );
  const place = placeOf(interaction);
  return {
    platform: 'discord',
    chatId: place.chatId,
    ...(place.threadId !== undefined ? { threadId: place.threadId } : {}),
    userId: interaction.user.id,
    userName: nameOf(interaction),
    data: interaction.customId,
    messageRef: { chatId: place.chatId, ...(place.threadId !== undefined ? { threadId: place.threadId } : {}), messageId: interaction.message.id },
    answer: async (text) => {
      if (!(await acknowledged) || text === undefined || text === '') return;
      await interaction
        .followUp({ content: text.slice(0, MAX_MESSAGE_LENGTH), flags: MessageFlags.Ephemeral, allowedMentions: NO_PINGS })
        .catch((error: unknown) => logger.warn({ method: 'followUp', ...describeError(error) }, 'discord could not show a button notice'));
    },
  };
}

/**
 * An application command as the gateway's `/name args` message. It is deferred at once as
 * an ephemeral reply; the gateway's answer fills it (`respond`), further answers follow it
 * privately. When the gateway stays silent (someone it ignores), the placeholder is removed.
 */
export function commandMessage(interaction: ChatInputCommandInteraction, logger: DiscordLogger, silenceMs: number): InboundMessage {
  const deferred = interaction.deferReply({ flags: MessageFlags.Ephemeral }).then(
    () => true,
    (error: unknown) => {
      logger.warn({ method: 'deferReply', ...describeError(error) }, 'discord could not acknowledge a command');
      return false;
    },
  );
  let answered = false;
  const silence = setTimeout(() => {
    if (answered) return;
    answered = true;
    void deferred.then((ok) => (ok ? interaction.deleteReply() : undefined)).catch(() => undefined);
  }, silenceMs);
  silence.unref();
  const args = interaction.options.getString(ARGS_OPTION) ?? '';
  const place = placeOf(interaction);
  return {
    platform: 'discord',
    chatId: place.chatId,
    // In a thread, `/stop`, `/new`, `/status` act on the thread's one conversation, as its messages do.
    ...(place.threadId !== undefined ? { threadId: place.threadId, sharedThread: true } : {}),
    ...(place.spaceId !== undefined ? { spaceId: place.spaceId } : {}),
    userId: interaction.user.id,
    userName: nameOf(interaction),
    chatType: place.chatType,
    text: `/${interaction.commandName}${args ? ` ${args}` : ''}`,
    attachments: [],
    mentionsBot: true,
    replyToBot: false,
    messageId: interaction.id,
    updateId: `i${interaction.id}`,
    respond: async (text) => {
      if (!(await deferred)) return;
      const first = !answered;
      answered = true;
      clearTimeout(silence);
      const parts = splitMessage(text, MAX_MESSAGE_LENGTH);
      try {
        for (const [index, part] of parts.entries()) {
          if (index === 0 && first) await interaction.editReply({ content: part, allowedMentions: NO_PINGS });
          else await interaction.followUp({ content: part, flags: MessageFlags.Ephemeral, allowedMentions: NO_PINGS });
        }
      } catch (error) {
        logger.warn({ method: 'editReply', ...describeError(error) }, 'discord could not answer a command');
      }
    },
  };
}
