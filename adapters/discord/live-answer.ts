import type { LiveAnswer, LiveAnswerOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { splitMessage } from '../../src/gateway/format/split.js';
import { channelOf, describeError, fitted, MAX_MESSAGE_LENGTH, type DiscordLogger, type DiscordOutbound } from './outbound.js';
import { LIVE_EDIT_INTERVAL_MS } from './capabilities.js';

export { LIVE_EDIT_INTERVAL_MS };

/**
 * An answer shown while it is written, Discord style: the first text posts one message, and
 * later text edits it, at most once per `intervalMs`. `finish` edits the message into the
 * answer's first 2,000-character part and sends the other parts as new messages, so the
 * person reads the answer once; when that cannot be done, what was shown is deleted and the
 * gateway sends the answer as usual.
 */
export class DiscordLiveAnswer implements LiveAnswer {
  private latest = '';
  private shown = '';
  private ref: SentRef | undefined;
  private posting = false;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastEditAt = 0;
  private ended = false;

  constructor(
    private readonly outbound: DiscordOutbound,
    private readonly target: Target,
    private readonly options: LiveAnswerOptions,
    private readonly logger: DiscordLogger,
    private readonly intervalMs = LIVE_EDIT_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  update(text: string): void {
    if (this.ended || text.trim() === '') return;
    this.latest = text;
    if (this.timer || this.posting) return;
    const wait = this.ref ? Math.max(0, this.lastEditAt + this.intervalMs - this.now()) : 0;
    if (wait === 0) return void this.flush();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
    this.timer.unref();
  }

  async finish(finalText: string): Promise<SentRef | undefined> {
    this.end();
    await this.work;
    const ref = this.ref;
    const parts = splitMessage(finalText, MAX_MESSAGE_LENGTH);
    if (!ref || parts.length === 0) {
      await this.withdraw([]);
      return undefined;
    }
    const sent: string[] = [];
    try {
      if (parts[0] !== this.shown) await this.outbound.patch(channelOf(ref), ref.messageId, parts[0] as string, []);
      let last = ref;
      for (const part of parts.slice(1)) {
        const message = await this.outbound.post(channelOf(this.target), { content: part });
        sent.push(message.id);
        last = { ...ref, messageId: message.id };
      }
      return last;
    } catch (error) {
      this.logger.warn({ chat: this.target.chatId, ...describeError(error) }, 'discord live answer could not become the answer; sending it anew');
      await this.withdraw(sent);
      return undefined;
    }
  }

  async cancel(): Promise<void> {
    this.end();
    await this.work;
    await this.withdraw([]);
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    // The text, or its first part marked "…" while longer than a message (never blank: `update` skips blank text).
    const display = fitted(this.latest, false);
    if (display === this.shown) return;
    this.posting = true;
    this.work = this.work
      .then(async () => {
        if (this.ended && this.ref) return;
        if (!this.ref) {
          const posted = await this.outbound.post(channelOf(this.target), { content: display, ...(this.options.chatType !== 'dm' && this.options.replyTo !== undefined ? { replyTo: this.options.replyTo } : {}) });
          this.ref = { chatId: this.target.chatId, ...(this.target.threadId !== undefined ? { threadId: this.target.threadId } : {}), messageId: posted.id };
        } else {
          await this.outbound.patch(channelOf(this.ref), this.ref.messageId, display, []);
        }
        this.shown = display;
        this.lastEditAt = this.now();
      })
      .catch((error: unknown) => this.logger.warn({ chat: this.target.chatId, ...describeError(error) }, 'discord live answer update failed'))
      .finally(() => {
        this.posting = false;
        // Text that arrived during the call is shown by the next edit.
        if (!this.ended && fitted(this.latest, false) !== this.shown) this.update(this.latest);
      });
  }

  /** Deletes what this live answer put in the chat, so the answer the gateway sends is the only copy. */
  private async withdraw(extra: string[]): Promise<void> {
    const ids = [...(this.ref ? [this.ref.messageId] : []), ...extra];
    this.ref = undefined;
    for (const id of ids) {
      await this.outbound.remove(channelOf(this.target), id).catch((error: unknown) =>
        this.logger.warn({ chat: this.target.chatId, ...describeError(error) }, 'discord could not delete a live answer message'),
      );
    }
  }
}
