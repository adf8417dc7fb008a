import type { ChatStreamer, WebClient } from '@slack/web-api';
import type { AdoptedAnswer, FinalAnswer, LiveAnswer, SentRef } from '../../src/gateway/channel.js';
import type { SlackLogger } from './logger.js';
import { describeError, slackErrorCode } from './outbound.js';
import { neutralizeBroadcasts, streamablePrefix } from './render.js';

/** Errors that mean this workspace or token cannot stream at all (not just this once). */
const STREAMING_REFUSED = new Set(['unknown_method', 'not_allowed_token_type', 'missing_scope', 'method_deprecated', 'feature_not_enabled', 'not_allowed', 'invalid_arguments']);

/** A streamed message holds this much; a longer answer is sent in parts instead. */
const MAX_STREAM_LENGTH = 12_000;

export type StreamOptions = {
  client: WebClient;
  logger: SlackLogger;
  channel: string;
  threadTs: string;
  /** Outside DMs Slack needs to know whom the stream is for. */
  recipient?: { teamId: string; userId: string };
  flushMs: number;
  flushChars: number;
  /** Slack refused streaming for good: later answers are not streamed. */
  onRefused(): void;
  /** The streamed message became the answer. */
  onAnswered(): void;
  /** Told before the stream starts (chat.startStream carries no metadata: the key is not used). */
  onCreating?(preview: string): string | undefined;
  /** Told when Slack took streamed text (the first time: the message exists). */
  onShown?(ref: SentRef): void;
};

/**
 * An answer streamed into its thread with Slack's native streaming (`chatStream`:
 * chat.startStream, chat.appendStream, chat.stopStream), flushed on a timer (about every
 * half second) and by size, so a short answer also appears as it is written. The final text
 * stops the stream and the message is the whole answer (a streamed message holds 12,000
 * characters, so all of its parts). When Slack refuses, or the final text is
 * not what was streamed, the partial message is deleted and `finish` says no, so the
 * gateway sends the answer as usual: never two copies, never none.
 */
export class SlackLiveAnswer implements LiveAnswer {
  private streamer: ChatStreamer | undefined;
  private streamed = '';
  private latest = '';
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failed = false;
  private closed = false;

  constructor(private readonly options: StreamOptions) {}

  update(text: string): void {
    if (this.closed || this.failed) return;
    this.latest = text;
    if (text.length - this.streamed.length >= this.options.flushChars) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, this.options.flushMs);
    }
  }

  async finish(answer: FinalAnswer): Promise<AdoptedAnswer | undefined> {
    await this.close();
    const finalText = neutralizeBroadcasts(answer.text);
    // The final text continues what was streamed (or is it, give or take trailing blanks).
    const continues = finalText.startsWith(this.streamed);
    const same = this.streamed.trimEnd() === finalText.trimEnd();
    if (this.failed || !(continues || same) || finalText.length > MAX_STREAM_LENGTH || finalText.trim() === '') {
      await this.discard();
      return undefined;
    }
    try {
      if (!this.streamer) this.options.onCreating?.(finalText);
      const streamer = this.streamer ?? this.start();
      const rest = continues ? finalText.slice(this.streamed.length) : '';
      await streamer.stop(rest !== '' ? { markdown_text: rest } : {});
      const ts = streamer.ts;
      if (ts === undefined) return undefined;
      const ref = { chatId: this.options.channel, threadId: this.options.threadTs, messageId: ts };
      this.options.onShown?.(ref);
      this.options.onAnswered();
      return { ref, parts: answer.parts.length };
    } catch (error) {
      this.refused('chat.stopStream', error);
      await this.discard();
      return undefined;
    }
  }

  async cancel(): Promise<void> {
    await this.close();
    await this.discard();
  }

  private flush(): void {
    this.chain = this.chain.then(() => this.push());
  }

  private async push(): Promise<void> {
    // Neutralized, and held back at a `<` that may still become a broadcast mention.
    const latest = streamablePrefix(this.latest);
    // A rewritten text cannot be un-appended; the final text settles it.
    if (this.failed || this.closed || !latest.startsWith(this.streamed) || latest.length > MAX_STREAM_LENGTH) return;
    const delta = latest.slice(this.streamed.length);
    if (delta === '') return;
    try {
      if (!this.streamer) this.options.onCreating?.(delta);
      const streamer = this.streamer ?? this.start();
      await streamer.append({ markdown_text: delta });
      this.streamed = latest;
      if (streamer.ts !== undefined) this.options.onShown?.({ chatId: this.options.channel, threadId: this.options.threadTs, messageId: streamer.ts });
    } catch (error) {
      this.refused(this.streamer?.ts === undefined ? 'chat.startStream' : 'chat.appendStream', error);
    }
  }

  private start(): ChatStreamer {
    const { client, channel, threadTs, recipient } = this.options;
    // buffer_size 1: hob decides when to flush (timer and size), the streamer sends at once.
    this.streamer = client.chatStream({
      channel,
      thread_ts: threadTs,
      ...(recipient ? { recipient_team_id: recipient.teamId, recipient_user_id: recipient.userId } : {}),
      buffer_size: 1,
    });
    return this.streamer;
  }

  private async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
    await this.chain;
    this.closed = true;
  }

  private refused(method: string, error: unknown): void {
    this.failed = true;
    this.options.logger.warn({ method, ...describeError(error) }, 'slack refused the stream; the answer is sent as a message');
    const code = slackErrorCode(error);
    if (code !== undefined && STREAMING_REFUSED.has(code)) this.options.onRefused();
  }

  /** Removes a partial streamed message, so the answer the gateway sends is the only copy. */
  private async discard(): Promise<void> {
    const ts = this.streamer?.ts;
    if (ts === undefined) return;
    try {
      if (!this.failed) await this.streamer?.stop().catch(() => undefined);
      await this.options.client.chat.delete({ channel: this.options.channel, ts });
    } catch (error) {
      this.options.logger.warn({ method: 'chat.delete', ...describeError(error) }, 'slack could not remove a partial streamed answer');
    }
  }
}
