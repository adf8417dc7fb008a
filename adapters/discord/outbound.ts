import { readFile } from 'node:fs/promises';
import { escapeMarkdown, type REST, Routes } from 'discord.js';
import { errorMessage } from '../../src/core/errors.js';
import type { AdapterLogger } from '../logger.js';
import type { Button, OutboundAudio, OutboundMessage, SendOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { partKey, sendInParts } from '../../src/gateway/send-parts.js';
import { MAX_MESSAGE_LENGTH } from './capabilities.js';

export { MAX_MESSAGE_LENGTH };

/**
 * Sent with every message and edit: nothing hob writes (or the model writes through it) can
 * ping `@everyone`, `@here`, a role or a user, and a reply does not ping its author.
 */
export const NO_PINGS = Object.freeze({ parse: [] as string[], replied_user: false });

export type DiscordLogger = AdapterLogger;

/** A message as Discord's REST API returns it (the fields hob reads). */
export type ApiMessage = { id: string; content?: string; author?: { id: string }; attachments?: { filename?: string }[]; nonce?: string | number };
type ActionRow = { type: 1; components: { type: 2; style: 1 | 2; label: string; custom_id: string }[] };

/** The channel a target names: a thread is a channel of its own on Discord. */
export function channelOf(target: Target): string {
  return target.threadId ?? target.chatId;
}

/**
 * Everything hob sends to Discord, through discord.js's REST client (which waits out 429s):
 * Markdown as it is (Discord renders it), split at 2,000 without breaking code blocks,
 * buttons as message components, files as uploads, and never a ping.
 */
export class DiscordOutbound {
  constructor(
    private readonly rest: REST,
    private readonly logger: DiscordLogger,
  ) {}

  /**
   * Sends as one or more messages; the last carries the buttons (and the file). When a later
   * part fails, throws PartialSendError so a retry with `skipParts` sends only the rest.
   */
  async send(target: Target, message: OutboundMessage, options: SendOptions = {}): Promise<SentRef> {
    if (message.audio) return this.sendAudio(target, message, message.audio, options.deliveryKey);
    const text = message.file && message.text.trim() === '' ? (message.file.caption ?? '') : message.text;
    const chunks = chunksOf(text, message.plain === true);
    if (chunks.length === 0 && !message.file) throw new Error('Discord cannot send an empty message');
    const parts = chunks.length === 0 ? [''] : chunks;
    const key = options.deliveryKey;
    const last = await sendInParts(
      parts.length,
      options,
      (index, isLast) =>
        this.post(channelOf(target), {
          content: parts[index] as string,
          ...(index === 0 && message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
          ...(isLast ? { buttons: message.buttons, file: message.file } : {}),
          ...(key !== undefined ? { nonce: partKey(key, index) } : {}),
        }),
      (sent) => sent.id,
    );
    return refOf(target, last, Boolean(message.file));
  }

  /**
   * A spoken answer: one message with the audio file (Discord plays it inline) and the text,
   * if any, fitted into that message; read from disk when sent, so a retry after a restart
   * sends the same file.
   */
  private async sendAudio(target: Target, message: OutboundMessage, audio: OutboundAudio, key?: string): Promise<SentRef> {
    const data = await readFile(audio.path);
    const content = message.text.trim() === '' ? '' : fitted(message.text, message.plain === true);
    const sent = await this.post(channelOf(target), {
      content,
      file: { name: audio.fileName, data },
      ...(message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
      ...(key !== undefined ? { nonce: partKey(key, 0) } : {}),
    });
    return refOf(target, sent, true);
  }

  /** Edits a message in place; no buttons given means the buttons go. Too long a text is cut, marked "…". */
  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    await this.patch(channelOf(ref), ref.messageId, fitted(message.text, message.plain === true), message.buttons ?? []);
  }

  async typing(target: Target): Promise<void> {
    try {
      await this.rest.post(Routes.channelTyping(channelOf(target)));
    } catch (error) {
      // A missing typing indicator is cosmetic; it must never fail a reply.
      this.logger.warn({ method: 'typing', ...describeError(error) }, 'discord typing indicator failed');
    }
  }

  /**
   * One message, as Discord's REST API wants it. With a nonce, Discord makes no second
   * message for it within a few minutes (`enforce_nonce`): a resend returns the first one,
   * also when discord.js retries a request that timed out.
   */
  async post(channelId: string, part: { content: string; replyTo?: string; buttons?: Button[][]; file?: OutboundMessage['file']; nonce?: string }): Promise<ApiMessage> {
    const body = {
      content: part.content,
      allowed_mentions: NO_PINGS,
      ...(part.nonce !== undefined ? { nonce: part.nonce, enforce_nonce: true } : {}),
      ...(part.replyTo !== undefined && /^\d+$/.test(part.replyTo) ? { message_reference: { message_id: part.replyTo, fail_if_not_exists: false } } : {}),
      ...(part.buttons && part.buttons.some((row) => row.length > 0) ? { components: componentsOf(part.buttons) } : {}),
      ...(part.file ? { attachments: [{ id: 0, filename: part.file.name }] } : {}),
    };
    const files = part.file ? [{ name: part.file.name, data: part.file.data }] : undefined;
    return (await this.rest.post(Routes.channelMessages(channelId), { body, ...(files ? { files } : {}) })) as ApiMessage;
  }

  async patch(channelId: string, messageId: string, content: string, buttons: Button[][]): Promise<void> {
    await this.rest.patch(Routes.channelMessage(channelId, messageId), {
      body: { content, allowed_mentions: NO_PINGS, components: componentsOf(buttons) },
    });
  }

  async remove(channelId: string, messageId: string): Promise<void> {
    await this.rest.delete(Routes.channelMessage(channelId, messageId));
  }

  /** The channel's messages after a snowflake, oldest first, at most `pages` × 100. */
  async messagesAfter(channelId: string, after: string, pages = 3): Promise<ApiMessage[]> {
    const all: ApiMessage[] = [];
    let cursor = after;
    for (let page = 0; page < pages; page++) {
      const batch = (await this.rest.get(Routes.channelMessages(channelId), { query: new URLSearchParams({ after: cursor, limit: '100' }) })) as ApiMessage[];
      const sorted = [...batch].sort((a, b) => compareIds(a.id, b.id));
      all.push(...sorted);
      const newest = sorted.at(-1);
      if (batch.length < 100 || !newest) break;
      cursor = newest.id;
    }
    return all;
  }
}

/** Plain text is escaped so Discord shows it as written; Markdown goes as it is. */
export function chunksOf(text: string, plain: boolean): string[] {
  return splitMessage(plain ? escapeMarkdown(text) : text, MAX_MESSAGE_LENGTH);
}

/** One part that fits a single message (an edit cannot be split): the head, marked "…". */
export function fitted(text: string, plain: boolean): string {
  const whole = plain ? escapeMarkdown(text) : text;
  if (whole.length <= MAX_MESSAGE_LENGTH) return whole === '' ? '…' : whole;
  const [head] = splitMessage(whole, MAX_MESSAGE_LENGTH - 2);
  return `${head ?? ''} …`;
}

/**
 * Buttons as action rows: at most 5 buttons a row and 5 rows, labels of at most 80
 * characters. Rows that do not fit are regrouped five to a row; beyond 25 buttons the rest
 * are left out (the person can still type an answer).
 */
function componentsOf(buttons: Button[][]): ActionRow[] {
  let rows = buttons.filter((row) => row.length > 0);
  if (rows.length > 5 || rows.some((row) => row.length > 5)) {
    const all = rows.flat().slice(0, 25);
    rows = [];
    for (let index = 0; index < all.length; index += 5) rows.push(all.slice(index, index + 5));
  }
  return rows.map((row) => ({
    type: 1,
    components: row.map((button, index) => ({ type: 2, style: index === 0 ? 1 : 2, label: button.label.slice(0, 80), custom_id: button.data })),
  }));
}

/** Snowflakes in time order (they are too long for a Number). */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function refOf(target: Target, sent: ApiMessage, isFile: boolean): SentRef {
  return {
    chatId: target.chatId,
    ...(target.threadId !== undefined ? { threadId: target.threadId } : {}),
    messageId: sent.id,
    ...(isFile ? { isFile: true } : {}),
  };
}

/** What a log line may carry about a failed call: never the payload (it holds people's text). */
export function describeError(error: unknown): Record<string, unknown> {
  if (error && typeof error === 'object' && 'status' in error && 'code' in error) {
    const { status, code } = error as { status: unknown; code: unknown };
    return { status, code, error: errorMessage(error) };
  }
  return { error: errorMessage(error) };
}
