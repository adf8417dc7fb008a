import { MessageFlags, MessageType, type Attachment as DiscordAttachment, type Message } from 'discord.js';
import type { Attachment, ChatType, InboundMessage } from '../../src/gateway/channel.js';

/** Fetches an attachment's bytes by its CDN url. */
export type FileDownloader = (url: string) => Promise<Buffer>;

/** Where a Discord channel sits in hob's terms: a thread is `chat` (its parent) plus `thread`. */
export type Place = { chatId: string; threadId?: string; chatType: ChatType; spaceId?: string };

/**
 * A Discord message → the gateway's InboundMessage. Undefined for messages nobody should
 * answer: every bot's (hob's own included), webhooks', system messages (joins, pins), and
 * messages that carry nothing hob can read and nothing it can name.
 */
export function normalizeMessage(message: Message, botId: string, download: FileDownloader): InboundMessage | undefined {
  if (message.author.bot || message.webhookId !== null || message.system) return undefined;
  if (message.type !== MessageType.Default && message.type !== MessageType.Reply) return undefined;
  const place = placeOf(message);
  // People often pick hob's own role (same name, made when it joined) from the @ menu.
  const ownRoles = message.guild?.roles.cache.filter((role) => role.tags?.botId === botId).map((role) => role.id) ?? [];
  const { text, mentionsBot } = addressedText(message.content, botId, ownRoles);
  const attachments = [...message.attachments.values()].map((attachment) => attachmentOf(attachment, message.flags.has(MessageFlags.IsVoiceMessage), download));
  let unsupported: string | undefined;
  if (text === '' && attachments.length === 0) {
    unsupported = message.stickers.size > 0 ? 'sticker' : message.poll ? 'poll' : undefined;
    if (unsupported === undefined) return undefined;
  }
  return {
    platform: 'discord',
    chatId: place.chatId,
    // A thread is one conversation for everyone in it (`discord:<channel>:<thread>`); each
    // message reaches the model framed with who wrote it, and approvals stay with the asker.
    ...(place.threadId !== undefined ? { threadId: place.threadId, sharedThread: true } : {}),
    ...(place.spaceId !== undefined ? { spaceId: place.spaceId } : {}),
    userId: message.author.id,
    userName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    chatType: place.chatType,
    text,
    attachments,
    mentionsBot,
    replyToBot: message.mentions.repliedUser?.id === botId,
    messageId: message.id,
    updateId: `m${message.id}`,
    ...(unsupported !== undefined ? { unsupported } : {}),
  };
}

/** A DM is its own chat; a thread belongs to its parent channel; the guild is the space. */
export function placeOf(source: { channelId: string; guildId: string | null; channel: { isThread(): boolean; parentId?: string | null } | null }): Place {
  const chatType: ChatType = source.guildId ? 'group' : 'dm';
  const space = source.guildId ? { spaceId: source.guildId } : {};
  const channel = source.channel;
  if (channel?.isThread() && channel.parentId) return { chatId: channel.parentId, threadId: source.channelId, chatType, ...space };
  return { chatId: source.channelId, chatType, ...space };
}

/** Removes hob's own `<@id>` (and its role's `<@&id>`) mentions ("<@hob>, what time is it" → "what time is it"). */
export function addressedText(content: string, botId: string, ownRoleIds: string[] = []): { text: string; mentionsBot: boolean } {
  const ids = [`!?${botId}`, ...ownRoleIds.filter((id) => /^\d+$/.test(id)).map((id) => `&${id}`)].join('|');
  const mention = new RegExp(`<@(?:${ids})>[,:;]?[ \\t]*`, 'g');
  const mentionsBot = mention.test(content);
  return { text: content.replace(mention, '').trim(), mentionsBot };
}

function attachmentOf(attachment: DiscordAttachment, isVoice: boolean, download: FileDownloader): Attachment {
  const mimeType = attachment.contentType?.split(';')[0]?.trim();
  const kind: Attachment['kind'] = isVoice ? 'voice' : mimeType?.startsWith('image/') ? 'image' : mimeType?.startsWith('audio/') ? 'audio' : mimeType?.startsWith('video/') ? 'video' : 'document';
  return {
    kind,
    download: () => download(attachment.url),
    // CDN urls stay valid long enough for a restart to fetch a queued message's files.
    ref: attachment.url,
    fileName: attachment.name,
    ...(mimeType ? { mimeType } : {}),
    sizeBytes: attachment.size,
    // Voice messages carry their length (duration_secs); other audio does not.
    ...(attachment.duration !== null ? { durationSeconds: attachment.duration } : {}),
  };
}
