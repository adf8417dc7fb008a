import type { WebClient } from '@slack/web-api';
import { errorMessage } from '../../src/core/errors.js';
import type { OutboundAudio, OutboundMessage, SendOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { partKey, sendInParts } from '../../src/gateway/send-parts.js';
import type { SlackLogger } from './logger.js';
import { MAX_MESSAGE_LENGTH, mrkdwnFor, renderMrkdwnPart, renderPart, toMrkdwn, type RenderedPart } from './render.js';

/**
 * Everything hob posts to Slack. Always into the thread it was addressed in: a target in a
 * channel without a thread goes under the message it answers. 429s are waited out by the web
 * client (Retry-After); other errors propagate (the gateway's outbox retries).
 */
export class SlackOutbound {
  constructor(
    private readonly client: WebClient,
    private readonly logger: SlackLogger,
  ) {}

  async send(target: Target, message: OutboundMessage, options: SendOptions = {}): Promise<SentRef> {
    const threadTs = threadOf(target, message.replyTo);
    const where = { chatId: target.chatId, ...(threadTs !== undefined ? { threadId: threadTs } : {}) };
    if (message.audio) return this.sendAudio(where, message, message.audio);
    if (message.file) return this.sendFile(where, message, message.file);
    const parts = message.text.trim() === '' ? [] : splitMessage(message.text, MAX_MESSAGE_LENGTH);
    if (parts.length === 0) throw new Error('Slack cannot send an empty message');
    const key = options.deliveryKey;
    const ts = await sendInParts(
      parts.length,
      options,
      (index, isLast) =>
        this.post(where, parts[index] as string, { plain: message.plain === true, ...(isLast && message.buttons ? { buttons: message.buttons } : {}) }, key === undefined ? undefined : partKey(key, index)),
      (sent) => sent,
    );
    return { ...where, messageId: ts };
  }

  async edit(ref: SentRef, message: OutboundMessage, key?: string): Promise<void> {
    if (ref.isFile) {
      this.logger.warn({ method: 'chat.update', chat: ref.chatId }, 'slack cannot edit a file message; left as it is');
      return;
    }
    const text = fitted(message.text);
    const render = { plain: message.plain === true, ...(message.buttons ? { buttons: message.buttons } : {}) };
    await this.withMrkdwnFallback('chat.update', text, render, (part) =>
      this.client.chat.update({ channel: ref.chatId, ts: ref.messageId, text: part.text, blocks: part.blocks, ...(key !== undefined ? { metadata: deliveryMetadata(key) } : {}) }),
    );
  }

  /** Removes a message of hob's; one that is gone already counts as removed. */
  async remove(ref: SentRef): Promise<void> {
    try {
      await this.client.chat.delete({ channel: ref.chatId, ts: ref.messageId });
    } catch (error) {
      if (slackErrorCode(error) !== 'message_not_found') throw error;
    }
  }

  /** One message; `key` goes into its metadata, where a look-up after a crash finds it. */
  async post(where: Target, text: string, render: { plain: boolean; buttons?: OutboundMessage['buttons'] }, key?: string): Promise<string> {
    const result = await this.withMrkdwnFallback('chat.postMessage', text, render, (part) =>
      this.client.chat.postMessage({
        channel: where.chatId,
        ...(where.threadId !== undefined ? { thread_ts: where.threadId } : {}),
        text: part.text,
        blocks: part.blocks,
        unfurl_links: false,
        ...(key !== undefined ? { metadata: deliveryMetadata(key) } : {}),
      }),
    );
    if (typeof result.ts !== 'string') throw new Error('Slack did not return the posted message');
    return result.ts;
  }

  /**
   * A file into the thread (files.uploadV2) with its caption as the comment. Slack puts no
   * buttons on a file, so a prompt with buttons follows the file as its own message, and the
   * ref names that message (the one to edit with the outcome).
   */
  private async sendFile(where: Target, message: OutboundMessage, file: NonNullable<OutboundMessage['file']>): Promise<SentRef> {
    const comment = message.text.trim() !== '' ? message.text : (file.caption ?? '');
    await mrkdwnFor(comment, message.plain);
    const hasButtons = (message.buttons ?? []).some((row) => row.length > 0);
    const upload = {
      file: file.data,
      filename: file.name,
      ...(!hasButtons && comment !== '' ? { initial_comment: message.plain ? comment : toMrkdwn(comment) } : {}),
    };
    const result = await (where.threadId !== undefined
      ? this.client.filesUploadV2({ ...upload, channel_id: where.chatId, thread_ts: where.threadId })
      : this.client.filesUploadV2({ ...upload, channel_id: where.chatId }));
    if (hasButtons) {
      const ts = await this.post(where, fitted(comment === '' ? file.name : comment), { plain: message.plain === true, buttons: message.buttons ?? [] });
      return { ...where, messageId: ts };
    }
    return { ...where, messageId: `file:${uploadedId(result) ?? 'unknown'}`, isFile: true };
  }

  /** A spoken answer: an audio file into the thread (Slack plays it inline), read from disk; the text, if any, as its comment. */
  private async sendAudio(where: Target, message: OutboundMessage, audio: OutboundAudio): Promise<SentRef> {
    const comment = message.text.trim();
    await mrkdwnFor(comment, message.plain);
    const upload = { file: audio.path, filename: audio.fileName, ...(comment !== '' ? { initial_comment: message.plain ? comment : toMrkdwn(comment) } : {}) };
    const result = await (where.threadId !== undefined
      ? this.client.filesUploadV2({ ...upload, channel_id: where.chatId, thread_ts: where.threadId })
      : this.client.filesUploadV2({ ...upload, channel_id: where.chatId }));
    return { ...where, messageId: `file:${uploadedId(result) ?? 'unknown'}`, isFile: true };
  }

  /** Calls with the markdown block; when Slack refuses the blocks, once more with mrkdwn. */
  private async withMrkdwnFallback<T>(method: string, text: string, render: { plain: boolean; buttons?: OutboundMessage['buttons'] }, call: (part: RenderedPart) => Promise<T>): Promise<T> {
    await mrkdwnFor(text, render.plain);
    try {
      return await call(renderPart(text, render));
    } catch (error) {
      if (render.plain || !isBlocksRefused(error)) throw error;
      this.logger.warn({ method, ...describeError(error) }, 'slack refused the markdown block; resending as mrkdwn');
      return call(renderMrkdwnPart(text, render));
    }
  }
}

/** The id of the file filesUploadV2 shared. */
function uploadedId(result: unknown): string | undefined {
  return (result as { files?: { files?: { id?: string }[] }[] }).files?.[0]?.files?.[0]?.id;
}

/** The thread to post in: the target's, or in a channel the message answered (never the channel's top). */
export function threadOf(target: Target, replyTo: string | undefined): string | undefined {
  if (target.threadId !== undefined) return target.threadId;
  if (replyTo !== undefined && !target.chatId.startsWith('D')) return replyTo;
  return undefined;
}

/** Slack's message metadata: an event type of hob's own, and the delivery part's key. */
export const DELIVERY_EVENT = 'hob_delivery';

function deliveryMetadata(key: string): { event_type: string; event_payload: { key: string } } {
  return { event_type: DELIVERY_EVENT, event_payload: { key } };
}

/** One part that fits (an edit cannot be split): the head, marked "…", code fences intact. */
export function fitted(text: string): string {
  if (text.length <= MAX_MESSAGE_LENGTH) return text;
  return `${splitMessage(text, MAX_MESSAGE_LENGTH - 1)[0] ?? ''}…`;
}

function isBlocksRefused(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code === 'invalid_blocks' || code === 'invalid_blocks_format';
}

/** The `error` field of a refused Web API call (`channel_not_found`…), if that is what failed. */
export function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === 'string' ? data.error : undefined;
}

/** What a log line may carry about a failed call: never the payload (it holds people's text). */
export function describeError(error: unknown): Record<string, unknown> {
  const code = slackErrorCode(error);
  if (code !== undefined) return { slackError: code };
  return { error: errorMessage(error) };
}
