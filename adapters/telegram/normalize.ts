import type { CallbackQuery, Chat, Message, MessageEntity, User } from 'grammy/types';
import type { Attachment, ButtonPress, ChatType, InboundMessage } from '../../src/gateway/channel.js';

/** Who the bot is, as getMe told us: needed to tell mentions of hob from mentions of others. */
export type BotIdentity = { id: number; username: string };

/** Fetches a file's bytes by Telegram file_id (getFile + download). */
export type FileDownloader = (fileId: string) => Promise<Buffer>;

/**
 * What a message can carry that hob cannot read, by the Message field that carries it. Venue
 * comes before location: a venue message fills both.
 */
const UNSUPPORTED_CONTENT = [
  'sticker', 'venue', 'location', 'contact', 'poll', 'dice', 'game', 'story', 'invoice', 'paid_media', 'giveaway', 'checklist',
] as const satisfies readonly (keyof Message)[];

/**
 * A Telegram message (new or edited) → the gateway's InboundMessage. Returns undefined for
 * messages there is nothing to answer: service messages (joins, pins), the bot's own messages,
 * and in groups anything that is not text or a file unless it replies to the bot. A DM (or a
 * group reply to the bot) that carries only what hob cannot read (a sticker, a location…)
 * arrives with empty text and `unsupported` naming it, so the gateway can say so.
 */
export function normalizeMessage(message: Message, updateId: number, bot: BotIdentity, download: FileDownloader): InboundMessage | undefined {
  if (message.from?.id === bot.id) return undefined;
  const addressed = addressedText(message.text ?? message.caption ?? '', message.entities ?? message.caption_entities ?? [], bot);
  // A command for another bot is never hob's, also as a reply to hob or with @hob in it.
  if (addressed.forOtherBot) return undefined;
  const attachments = attachmentsOf(message, download);
  const chatType = chatTypeOf(message.chat.type);
  const replyToBot = message.reply_to_message?.from?.id === bot.id;
  // Only an edited message has an edit_date.
  const editedAfterSeconds = message.edit_date !== undefined ? Math.max(0, message.edit_date - message.date) : undefined;
  let unsupported: string | undefined;
  if (addressed.text === '' && attachments.length === 0) {
    // A live location moves by editing its message every few seconds: edits are never answered.
    if (editedAfterSeconds !== undefined || !(chatType === 'dm' || replyToBot)) return undefined;
    unsupported = UNSUPPORTED_CONTENT.find((field) => message[field] !== undefined);
    if (unsupported === undefined) return undefined;
  }
  const threadId = threadIdOf(message);
  // Anonymous group admins and linked channels post as a chat; that chat is the author.
  const author = message.sender_chat ? chatAsAuthor(message.sender_chat) : message.from ? userAsAuthor(message.from) : chatAsAuthor(message.chat);
  const chatId = String(message.chat.id);
  return {
    platform: 'telegram',
    chatId,
    ...(threadId !== undefined ? { threadId } : {}),
    userId: author.id,
    userName: author.name,
    chatType,
    text: addressed.text,
    attachments,
    mentionsBot: addressed.mentionsBot,
    replyToBot,
    messageId: String(message.message_id),
    updateId: String(updateId),
    ...(editedAfterSeconds !== undefined ? { editedAfterSeconds } : {}),
    // Album ids are unique per chat only.
    ...(message.media_group_id !== undefined ? { batchKey: `${chatId}:${message.media_group_id}` } : {}),
    ...(unsupported !== undefined ? { unsupported } : {}),
    ...quotedOf(message.reply_to_message, replyToBot),
  };
}

/** The message replied to, so the model knows what "this" refers to (not forum topics' implicit replies). */
function quotedOf(reply: Message | undefined, fromBot: boolean): { quoted?: { text: string; fromBot: boolean } } {
  const text = reply?.text ?? reply?.caption;
  if (!reply || !text || reply.forum_topic_created) return {};
  return { quoted: { text: text.slice(0, 500), fromBot } };
}

/**
 * A callback query → ButtonPress. Undefined when the query carries no data (games) or no
 * message (buttons under inline-mode messages, which hob never sends).
 */
export function normalizeCallback(query: CallbackQuery, answer: ButtonPress['answer']): ButtonPress | undefined {
  const message = query.message;
  if (query.data === undefined || !message) return undefined;
  // An inaccessible message (older than 48 h) still names its chat and id.
  const threadId = 'is_topic_message' in message && message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined;
  const chatId = String(message.chat.id);
  const messageId = String(message.message_id);
  return {
    platform: 'telegram',
    chatId,
    ...(threadId !== undefined ? { threadId } : {}),
    userId: String(query.from.id),
    userName: displayName(query.from),
    data: query.data,
    messageRef: { chatId, ...(threadId !== undefined ? { threadId } : {}), messageId },
    answer,
  };
}

export type AddressedText = {
  /** The text with the bot's own mentions removed and `/cmd@botname` shortened to `/cmd`. */
  text: string;
  mentionsBot: boolean;
  /** It starts with a command for another bot (`/start@otherbot`). */
  forOtherBot?: boolean;
};

/**
 * Reads who a message is addressed to from Telegram's entities (offsets are UTF-16, like JS
 * strings). A message that starts with a command for another bot (`/start@otherbot`) is
 * addressed to that bot, whatever else it mentions, and is left exactly as written
 * (with `forOtherBot` set).
 */
export function addressedText(text: string, entities: readonly MessageEntity[], bot: BotIdentity): AddressedText {
  const ownName = `@${bot.username.toLowerCase()}`;
  const edits: { start: number; end: number; replacement: string; mention: boolean }[] = [];
  let mentionsBot = false;
  for (const entity of entities) {
    const start = entity.offset;
    const end = entity.offset + entity.length;
    const value = text.slice(start, end);
    if (entity.type === 'mention' && value.toLowerCase() === ownName) {
      mentionsBot = true;
      edits.push({ start, end, replacement: '', mention: true });
    } else if (entity.type === 'text_mention' && entity.user.id === bot.id) {
      mentionsBot = true;
      edits.push({ start, end, replacement: '', mention: true });
    } else if (entity.type === 'bot_command') {
      const at = value.indexOf('@');
      if (at === -1) continue;
      if (value.slice(at).toLowerCase() === ownName) {
        mentionsBot = true;
        edits.push({ start, end, replacement: value.slice(0, at), mention: false });
      } else if (start === 0) {
        return { text: text.trim(), mentionsBot: false, forOtherBot: true };
      }
    }
  }
  return { text: applyEdits(text, edits).trim(), mentionsBot };
}

function applyEdits(text: string, edits: { start: number; end: number; replacement: string; mention: boolean }[]): string {
  let out = '';
  let position = 0;
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    if (edit.start < position) continue; // overlapping entities: keep the first
    out += text.slice(position, edit.start) + edit.replacement;
    position = edit.end;
    if (edit.mention && (out === '' || /\s$/.test(out))) {
      // "@hob, what time is it" → "what time is it"; "hey @hob ping" → "hey ping".
      position += /^[,:;]?[ \t]*/.exec(text.slice(position))?.[0].length ?? 0;
    }
  }
  return out + text.slice(position);
}

/** Forum topics are threads; a reply chain in an ordinary group is not (it has no is_topic_message). */
export function threadIdOf(message: Message): string | undefined {
  return message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined;
}

export function chatTypeOf(type: Chat['type']): ChatType {
  switch (type) {
    case 'private':
      return 'dm';
    case 'group':
    case 'supergroup':
      return 'group';
    case 'channel':
      return 'channel';
    default: {
      const unknownType: never = type;
      return unknownType;
    }
  }
}

export function displayName(user: User): string {
  const full = [user.first_name, user.last_name].filter((part) => part !== undefined && part !== '').join(' ');
  return full || user.username || String(user.id);
}

function userAsAuthor(user: User): { id: string; name: string } {
  return { id: String(user.id), name: displayName(user) };
}

function chatAsAuthor(chat: Chat): { id: string; name: string } {
  const name = 'title' in chat && chat.title ? chat.title : 'username' in chat && chat.username ? chat.username : String(chat.id);
  return { id: String(chat.id), name };
}

/** The files a message carries, each downloaded only when the gateway asks for its bytes. */
export function attachmentsOf(message: Message, download: FileDownloader): Attachment[] {
  const lazy = (fileId: string) => ({ download: () => download(fileId), ref: fileId });
  const size = (bytes: number | undefined) => (bytes !== undefined ? { sizeBytes: bytes } : {});
  const name = (fileName: string | undefined) => (fileName !== undefined ? { fileName } : {});
  const mime = (mimeType: string | undefined) => (mimeType !== undefined ? { mimeType } : {});

  if (message.photo && message.photo.length > 0) {
    // Telegram lists the sizes it made, smallest first; the last one is the original size.
    const largest = message.photo.reduce((best, photo) => (photo.width * photo.height >= best.width * best.height ? photo : best));
    // Telegram re-encodes photos as JPEG.
    return [{ kind: 'image', ...lazy(largest.file_id), mimeType: 'image/jpeg', ...size(largest.file_size) }];
  }
  const length = (seconds: number | undefined) => (seconds !== undefined ? { durationSeconds: seconds } : {});
  // An animation also fills `document` (for old clients); it is a video to hob.
  const video = message.video ?? message.animation;
  if (video) return [{ kind: 'video', ...lazy(video.file_id), ...name(video.file_name), ...mime(video.mime_type), ...size(video.file_size), ...length(video.duration) }];
  if (message.video_note) {
    const note = message.video_note;
    return [{ kind: 'video', videoNote: true, ...lazy(note.file_id), fileName: 'video_note.mp4', mimeType: 'video/mp4', ...size(note.file_size), ...length(note.duration) }];
  }
  if (message.voice) {
    const voice = message.voice;
    return [{ kind: 'voice', ...lazy(voice.file_id), mimeType: voice.mime_type ?? 'audio/ogg', ...size(voice.file_size), ...length(voice.duration) }];
  }
  if (message.audio) {
    const audio = message.audio;
    return [{ kind: 'audio', ...lazy(audio.file_id), ...name(audio.file_name), ...mime(audio.mime_type), ...size(audio.file_size), ...length(audio.duration) }];
  }
  if (message.document) {
    const document = message.document;
    return [{ kind: 'document', ...lazy(document.file_id), ...name(document.file_name), ...mime(document.mime_type), ...size(document.file_size) }];
  }
  return [];
}
