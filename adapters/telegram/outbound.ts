import { GrammyError, InputFile, type Api } from 'grammy';
import type { InlineKeyboardMarkup, Message } from 'grammy/types';
import { PartialSendError, type Button, type OutboundAudio, type OutboundMessage, type SendOptions, type SentRef, type Target } from '../../src/gateway/channel.js';
import { splitMessage, splitRendered, type RenderedChunk } from '../../src/gateway/format/split.js';
import { sendInParts } from '../../src/gateway/send-parts.js';
import { markdownFor, markdownToTelegramHtml, stripMarkdown } from './html.js';
import type { TelegramLogger } from './logger.js';
import { MAX_MESSAGE_LENGTH } from './capabilities.js';

export { MAX_MESSAGE_LENGTH };

const MAX_CAPTION_LENGTH = 1024;

type ChatId = number | string;
type ReplyParameters = { message_id: number; allow_sending_without_reply: true };
type Extra = { message_thread_id?: number; reply_markup?: InlineKeyboardMarkup; reply_parameters?: ReplyParameters };

/**
 * Everything hob sends to Telegram: Markdown rendered as Telegram HTML, with a plain-text
 * resend of the same chunk when Telegram refuses the markup, so a person always reads the
 * answer exactly once. Errors other than refused markup propagate (the gateway's outbox
 * retries); 429s were already retried by the auto-retry transformer.
 */
export class TelegramOutbound {
  constructor(
    private readonly api: Api,
    private readonly logger: TelegramLogger,
  ) {}

  /**
   * Sends a message as one or more parts (split at 4096; a file is the last part). When a
   * later part fails, throws PartialSendError with how many parts are in the chat, and a
   * retry with `skipParts` sends only the rest: the person reads each part once.
   */
  async send(target: Target, message: OutboundMessage, options: SendOptions = {}): Promise<SentRef> {
    await walkFor(message);
    if (message.audio) return this.sendAudio(target, message, message.audio, options.onPartSent);
    if (message.file) return this.sendFile(target, message, message.file, options.skipParts ?? 0, options.onPartSent);
    const chunks = this.chunksOf(message);
    if (chunks.length === 0) throw new Error('Telegram cannot send an empty message');
    return this.sendParts(target, chunks, message, options.skipParts ?? 0, options.onPartSent);
  }

  private async sendParts(target: Target, chunks: RenderedChunk[], message: OutboundMessage, skipParts: number, onPartSent?: SendOptions['onPartSent']): Promise<SentRef> {
    const chatId = chatIdOf(target.chatId);
    const thread = threadExtra(target);
    const keyboard = keyboardExtra(message.buttons);
    const reply = replyExtra(message.replyTo);
    const last = await sendInParts(chunks.length, { skipParts, onPartSent }, (index, isLast) => {
      // Only the first part answers the message; the rest follow it.
      const extra = { ...thread, ...(index === 0 ? reply : {}), ...(isLast ? keyboard : {}) };
      return this.sendChunk(chatId, chunks[index] as RenderedChunk, message.plain === true, extra);
    }, (sent) => String(sent.message_id));
    return refOf(target, last);
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    await walkFor(message);
    const chatId = chatIdOf(ref.chatId);
    const messageId = Number(ref.messageId);
    const keyboard = keyboardExtra(message.buttons);
    if (ref.isFile) return this.editCaption(chatId, messageId, message, keyboard);
    const chunk = this.fitted(message, MAX_MESSAGE_LENGTH);
    try {
      await this.withPlainFallback('editMessageText', chunk, message.plain === true, (text, parseMode) =>
        this.api.editMessageText(chatId, messageId, text, { ...keyboard, ...parseModeExtra(parseMode) }),
      );
    } catch (error) {
      if (isNotModified(error)) return;
      if (!(error instanceof GrammyError && /no text in the message to edit/i.test(error.description))) throw error;
      // The message is a file (a long approval prompt sent as a document): edit its caption.
      await this.editCaption(chatId, messageId, message, keyboard);
    }
  }

  async typing(target: Target): Promise<void> {
    try {
      await this.api.sendChatAction(chatIdOf(target.chatId), 'typing', threadExtra(target));
    } catch (error) {
      // A missing typing indicator is cosmetic; it must never fail a reply.
      this.logger.warn({ method: 'sendChatAction', ...describeError(error) }, 'telegram typing indicator failed');
    }
  }

  /**
   * A file as a document. The message text becomes its caption when it fits; a longer text is
   * sent first as ordinary messages and the document follows with `file.caption` (if any).
   * Buttons go under the document, the last message.
   */
  private async sendFile(target: Target, message: OutboundMessage, file: NonNullable<OutboundMessage['file']>, skipParts: number, onPartSent?: SendOptions['onPartSent']): Promise<SentRef> {
    const chatId = chatIdOf(target.chatId);
    const thread = threadExtra(target);
    const keyboard = keyboardExtra(message.buttons);
    const text = message.text.trim() !== '' ? message.text : (file.caption ?? '');
    let caption = text;
    const rendered = message.plain ? text : markdownToTelegramHtml(text);
    let textParts = 0;
    if (rendered.length > MAX_CAPTION_LENGTH) {
      const lead: OutboundMessage = { text, ...(message.plain ? { plain: true } : {}), ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}) };
      const chunks = this.chunksOf(lead);
      textParts = chunks.length;
      // The text goes ahead of the file: none of its parts is the message's last.
      if (skipParts < textParts) await this.sendParts(target, chunks, lead, skipParts, onPartSent && ((parts, id) => onPartSent(parts, id, false)));
      // The file's own caption, shortened to fit (marked …) rather than dropped.
      caption = file.caption !== undefined && file.caption !== text ? file.caption : '';
    }
    const chunk = caption === '' ? undefined : this.fitted({ ...message, text: caption }, MAX_CAPTION_LENGTH);
    // When text went ahead of the file, that text is the answer; the file follows it.
    const reply = textParts === 0 ? replyExtra(message.replyTo) : {};
    const upload = (text: string | undefined, parseMode: 'HTML' | undefined) =>
      // A fresh InputFile per attempt: a refused upload must not leave a consumed one behind.
      this.api.sendDocument(chatId, new InputFile(file.data, file.name), {
        ...thread,
        ...reply,
        ...keyboard,
        ...(text !== undefined ? { caption: text, ...parseModeExtra(parseMode) } : {}),
      });
    try {
      const sent = chunk
        ? await this.withPlainFallback('sendDocument', chunk, message.plain === true, upload)
        : await upload(undefined, undefined);
      onPartSent?.(textParts + 1, String(sent.message_id), true);
      return refOf(target, sent);
    } catch (error) {
      throw textParts > 0 ? new PartialSendError(textParts, error) : error;
    }
  }

  /**
   * A spoken answer: a voice message (sendVoice, Ogg/Opus, shown with its length) or an audio
   * file (sendAudio), read from disk as it is uploaded; `message.text`, if any, is its caption.
   */
  private async sendAudio(target: Target, message: OutboundMessage, audio: OutboundAudio, onPartSent?: SendOptions['onPartSent']): Promise<SentRef> {
    const chatId = chatIdOf(target.chatId);
    const chunk = message.text.trim() === '' ? undefined : this.fitted(message, MAX_CAPTION_LENGTH);
    const upload = (text: string | undefined, parseMode: 'HTML' | undefined): Promise<Message> => {
      const other = {
        ...threadExtra(target),
        ...replyExtra(message.replyTo),
        ...keyboardExtra(message.buttons),
        ...(audio.durationSeconds !== undefined ? { duration: Math.max(1, Math.round(audio.durationSeconds)) } : {}),
        ...(text !== undefined ? { caption: text, ...parseModeExtra(parseMode) } : {}),
      };
      // A fresh InputFile per attempt: it streams the file from disk, once.
      const file = new InputFile(audio.path, audio.fileName);
      return audio.as === 'voice_message' ? this.api.sendVoice(chatId, file, other) : this.api.sendAudio(chatId, file, other);
    };
    const method = audio.as === 'voice_message' ? 'sendVoice' : 'sendAudio';
    const sent = chunk ? await this.withPlainFallback(method, chunk, message.plain === true, upload) : await upload(undefined, undefined);
    onPartSent?.(1, String(sent.message_id), true);
    return { ...refOf(target, sent), isFile: true };
  }

  private async editCaption(chatId: ChatId, messageId: number, message: OutboundMessage, keyboard: Extra): Promise<void> {
    const chunk = this.fitted(message, MAX_CAPTION_LENGTH);
    try {
      await this.withPlainFallback('editMessageCaption', chunk, message.plain === true, (caption, parseMode) =>
        this.api.editMessageCaption(chatId, messageId, { caption, ...keyboard, ...parseModeExtra(parseMode) }),
      );
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  private chunksOf(message: OutboundMessage): RenderedChunk[] {
    if (message.plain) return splitMessage(message.text, MAX_MESSAGE_LENGTH).map((text) => ({ markdown: text, rendered: text }));
    return splitRendered(message.text, MAX_MESSAGE_LENGTH, markdownToTelegramHtml);
  }

  /** One chunk that fits `limit` (an edit or a caption cannot be split): the head, marked "…". */
  private fitted(message: OutboundMessage, limit: number): RenderedChunk {
    const whole = message.plain ? message.text : markdownToTelegramHtml(message.text);
    if (whole.length <= limit) return { markdown: message.text, rendered: whole };
    const render = message.plain ? (text: string) => text : markdownToTelegramHtml;
    const [head] = splitRendered(message.text, limit - 1, render);
    return head ? { markdown: `${head.markdown}…`, rendered: `${head.rendered}…` } : { markdown: '…', rendered: '…' };
  }

  private sendChunk(chatId: ChatId, chunk: RenderedChunk, plain: boolean, extra: Extra): Promise<Message> {
    return this.withPlainFallback('sendMessage', chunk, plain, (text, parseMode) =>
      this.api.sendMessage(chatId, text, { ...extra, ...parseModeExtra(parseMode) }),
    );
  }

  /**
   * Calls with the HTML rendering; when Telegram refuses it ("can't parse entities"), calls
   * once more with a plain rendering of the same Markdown and no parse mode.
   */
  private async withPlainFallback<T>(method: string, chunk: RenderedChunk, plain: boolean, call: (text: string, parseMode: 'HTML' | undefined) => Promise<T>): Promise<T> {
    if (plain) return call(chunk.rendered, undefined);
    try {
      return await call(chunk.rendered, 'HTML');
    } catch (error) {
      if (!isParseError(error)) throw error;
      this.logger.warn({ method, ...describeError(error) }, 'telegram refused the HTML; resending as plain text');
      return call(stripMarkdown(chunk.markdown), undefined);
    }
  }
}

/** The Markdown walk, loaded first when the message's text (or a file's caption) needs it (html.ts). */
async function walkFor(message: OutboundMessage): Promise<void> {
  await markdownFor(message.text, message.plain);
  await markdownFor(message.file?.caption ?? '', message.plain);
}

/** Numeric chat ids as numbers (what Telegram sends us); `@channel` names as they are. */
export function chatIdOf(chatId: string): ChatId {
  return /^-?\d+$/.test(chatId) ? Number(chatId) : chatId;
}

function threadExtra(target: Target): { message_thread_id?: number } {
  return target.threadId !== undefined ? { message_thread_id: Number(target.threadId) } : {};
}

function keyboardExtra(buttons: Button[][] | undefined): { reply_markup?: InlineKeyboardMarkup } {
  const rows = (buttons ?? []).filter((row) => row.length > 0);
  if (rows.length === 0) return {};
  return { reply_markup: { inline_keyboard: rows.map((row) => row.map((button) => ({ text: button.label, callback_data: button.data }))) } };
}

/** Answers a message, or goes out as an ordinary message when that message was deleted meanwhile. */
function replyExtra(replyTo: string | undefined): { reply_parameters?: ReplyParameters } {
  if (replyTo === undefined || !/^\d+$/.test(replyTo)) return {};
  return { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } };
}

function parseModeExtra(parseMode: 'HTML' | undefined): { parse_mode?: 'HTML' } {
  return parseMode ? { parse_mode: parseMode } : {};
}

function refOf(target: Target, sent: Message): SentRef {
  return {
    chatId: target.chatId,
    ...(target.threadId !== undefined ? { threadId: target.threadId } : {}),
    messageId: String(sent.message_id),
    ...(sent.document ? { isFile: true } : {}),
  };
}

function isParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && /message is not modified/i.test(error.description);
}

/** What a log line may carry about a failed call: never the payload (it holds people's text). */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof GrammyError) return { errorCode: error.error_code, description: error.description };
  return { error: error instanceof Error ? error.message : String(error) };
}
