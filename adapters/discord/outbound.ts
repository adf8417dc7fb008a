import { escapeMarkdown, type REST, Routes } from 'discord.js';
import { errorMessage } from '../../src/core/errors.js';
import type { AdapterLogger } from '../logger.js';
import type { Button, OutboundMessage, SendOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { sendInParts } from '../../src/gateway/send-parts.js';
import { MAX_MESSAGE_LENGTH } from './capabilities.js';

export { MAX_MESSAGE_LENGTH };

/**
 * Sent with every message and edit: nothing hob writes (or the model writes through it) can
 * ping `@everyone`, `@here`, a role or a user, and a reply does not ping its author.
 */
export const NO_PINGS = Object.freeze({ parse: [] as string[], replied_user: false });

export type DiscordLogger = AdapterLogger;

type ApiMessage = { id: string; attachments?: unknown[] };
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
    const text = message.file && message.text.trim() === '' ? (message.file.caption ?? '') : message.text;
    const chunks = chunksOf(text, message.plain === true);
    if (chunks.length === 0 && !message.file) throw new Error('Discord cannot send an empty message');
    const parts = chunks.length === 0 ? [''] : chunks;
    const last = await sendInParts(parts.length, options, (index, isLast) =>
      this.post(channelOf(target), {
        content: parts[index] as string,
        ...(index === 0 && message.replyTo !== undefined ? { replyTo: message.replyTo } : {}),
        ...(isLast ? { buttons: message.buttons, file: message.file } : {}),
      }),
    );
    return refOf(target, last, Boolean(message.file));
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

  /** One message, as Discord's REST API wants it. */
  async post(channelId: string, part: { content: string; replyTo?: string; buttons?: Button[][]; file?: OutboundMessage['file'] }): Promise<ApiMessage> {
    const body = {
      content: part.content,
      allowed_mentions: NO_PINGS,
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
