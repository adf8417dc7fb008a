import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { OutboxRepository } from '../store/outbox.js';
import { PartialSendError, type ChannelAdapter, type OutboundMessage, type SentRef, type Target } from './channel.js';

type StoredMessage = Omit<OutboundMessage, 'file'> & { file?: { name: string; data: string; caption?: string } };

/** How an answer's live view is offered to become the answer (see `Delivery.sendAnswer`). */
export type AnswerAdoption = {
  /** The live message's ref when it now is the whole answer, else undefined. Must not throw. */
  adopt(): Promise<SentRef | undefined>;
  /** Ends the live view: the answer is sent normally later. Must not throw. */
  decline(): Promise<void>;
};

const MAX_ATTEMPTS = 8;
/** How long one send attempt holds its row; longer than any platform call takes. */
const LEASE_MS = 120_000;

/**
 * The delivery outbox: every outgoing message is written to SQLite before the platform call
 * and marked with the platform's message id after. A failed send is retried with backoff by
 * the worker, also after a restart. Edits of progress messages are not recorded (they are
 * ephemeral; the answer that follows is).
 */
export class Delivery {
  private readonly adapters = new Map<string, ChannelAdapter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** Who waits to learn where a delivery landed, also when a retry delivers it. */
  private readonly onSent = new Map<number, (ref: SentRef) => void>();
  private stopping = false;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly retryBaseMs = 1000,
  ) {}

  register(adapter: ChannelAdapter): void {
    this.adapters.set(adapter.platform, adapter);
  }

  /**
   * Records and sends. Returns the sent message's ref, or undefined when the send failed and
   * was left to the worker (the person still gets it later). `track.recorded` learns the
   * outbox id at once; `track.sent` learns the ref whenever the message lands, also on a retry.
   */
  async send(
    platform: string,
    target: Target,
    message: OutboundMessage,
    sessionKey?: string,
    track: { recorded?(outboxId: number): void; sent?(ref: SentRef): void } = {},
  ): Promise<SentRef | undefined> {
    const id = this.recordLeased(platform, target, message, sessionKey);
    track.recorded?.(id);
    if (track.sent) this.onSent.set(id, track.sent);
    return this.sendRecorded(id, platform, target, message, sessionKey);
  }

  /**
   * Delivers an answer that a live view (a draft, a stream) may already show. Every message
   * is recorded first, so the live view is never the only copy; then `live.adopt` may make the
   * live message the answer: its ref marks the rows sent and nothing more goes out. Otherwise
   * (undefined) they are sent as `send` sends them. When an earlier message to this chat still
   * waits for a retry, the answer must not pass it: the live view is declined and the rows
   * wait in line. A crash between adopt and the mark leaves the rows pending: the next start
   * sends them (on platforms where the live message stays, the person then reads it twice).
   */
  async sendAnswer(platform: string, target: Target, messages: OutboundMessage[], sessionKey: string | undefined, live: AnswerAdoption): Promise<SentRef | undefined> {
    const ids = messages.map((message) => this.recordLeased(platform, target, message, sessionKey));
    const [first] = ids;
    if (first === undefined || this.outbox.blockedBy(first, platform, target.chatId, this.clock.now())) {
      await live.decline();
      for (const id of ids) this.outbox.defer(id, 'waiting for an earlier message to this chat', this.clock.now());
      return undefined;
    }
    const adopted = await live.adopt();
    if (adopted) {
      for (const id of ids) this.outbox.markSent(id, adopted.messageId, this.clock.now());
      return adopted;
    }
    let ref: SentRef | undefined;
    for (const [index, id] of ids.entries()) ref = await this.sendRecorded(id, platform, target, messages[index] as OutboundMessage, sessionKey);
    return ref;
  }

  /** A new row, leased: the caller sends it at once, so the worker leaves it alone meanwhile. */
  private recordLeased(platform: string, target: Target, message: OutboundMessage, sessionKey?: string): number {
    const now = this.clock.now();
    return this.outbox.add({ platform, chatId: target.chatId, threadId: target.threadId, sessionKey, message: encode(message), now, leaseUntil: now + LEASE_MS });
  }

  private sendRecorded(id: number, platform: string, target: Target, message: OutboundMessage, sessionKey?: string): Promise<SentRef | undefined> {
    const now = this.clock.now();
    if (this.outbox.blockedBy(id, platform, target.chatId, now)) {
      // An earlier message to this chat waits for a retry: this one goes out after it.
      this.outbox.defer(id, 'waiting for an earlier message to this chat', now);
      return Promise.resolve(undefined);
    }
    return this.attempt(id, platform, target, message, 0, 0, sessionKey);
  }

  /**
   * Sends without recording: for messages that only matter now (a progress line soon edited
   * away). A failure is logged and reported as undefined; nothing retries it later.
   */
  async sendNow(platform: string, target: Target, message: OutboundMessage, sessionKey?: string): Promise<SentRef | undefined> {
    const adapter = this.adapters.get(platform);
    try {
      if (!adapter) throw new Error(`no ${platform} channel is running`);
      return await adapter.send(target, message);
    } catch (error) {
      this.logger.warn({ session: sessionKey, platform, chat: target.chatId, err: errorMessage(error) }, 'could not send a progress message');
      return undefined;
    }
  }

  /**
   * Withdraws a delivery that has not gone out yet; false when it already has. Whoever waits
   * for it still hears if a send already in flight lands after all.
   */
  cancel(outboxId: number, reason: string): boolean {
    const cancelled = this.outbox.cancel(outboxId, reason);
    // A send already in flight took its callback with it (attempt reads it first).
    if (cancelled) this.onSent.delete(outboxId);
    return cancelled;
  }

  /** Records a message for the worker without sending it now (hob is closing: the next start sends it). */
  record(platform: string, target: Target, message: OutboundMessage, sessionKey?: string): void {
    this.outbox.add({ platform, chatId: target.chatId, threadId: target.threadId, sessionKey, message: encode(message), now: this.clock.now() });
  }

  /** Starts the worker that retries pending deliveries (and sends those left by a crash). */
  start(intervalMs = 1000): void {
    this.stopping = false;
    this.timer ??= setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
    void this.flush();
  }

  /**
   * Stops the worker: the pass in progress finishes the send it is in (so no send is cut off
   * by closing the store) and takes no more rows; at most `graceMs` is waited for it.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flushing, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  /** At start-up no send is in flight: rows a previous process leased are due again. */
  releaseLeases(): void {
    this.outbox.releaseLeases(this.clock.now());
  }

  /** Sends every due pending delivery once. Concurrent calls share one pass. */
  flush(): Promise<void> {
    this.flushing ??= this.flushDue().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Oldest first; in each chat, nothing passes a message that is still failing. */
  private async flushDue(): Promise<void> {
    const held = new Set<string>();
    for (const row of this.outbox.due(this.clock.now())) {
      if (this.stopping) return;
      const chat = `${row.platform}:${row.chatId}`;
      if (!this.adapters.has(row.platform) || held.has(chat)) continue;
      if (this.outbox.blockedBy(row.id, row.platform, row.chatId, this.clock.now()) || !this.outbox.lease(row.id, this.clock.now(), this.clock.now() + LEASE_MS)) {
        held.add(chat);
        continue;
      }
      const target: Target = { chatId: row.chatId, ...(row.threadId ? { threadId: row.threadId } : {}) };
      const sent = await this.attempt(row.id, row.platform, target, decode(row.message), row.attempts, row.partsSent, row.sessionKey ?? undefined);
      if (!sent) held.add(chat);
    }
  }

  private async attempt(
    id: number,
    platform: string,
    target: Target,
    message: OutboundMessage,
    attempts: number,
    partsSent: number,
    sessionKey?: string,
  ): Promise<SentRef | undefined> {
    const adapter = this.adapters.get(platform);
    if (!adapter) {
      this.outbox.markRetry(id, `no ${platform} channel is running`, this.clock.now() + this.retryBaseMs * 30);
      return undefined;
    }
    try {
      const sent = this.onSent.get(id);
      const ref = await adapter.send(target, message, {
        ...(partsSent ? { skipParts: partsSent } : {}),
        onPartSent: (parts) => this.outbox.markPartsSent(id, parts),
      });
      // At once, before anything else: a kill between the platform's "ok" and this line is
      // the one window where a message can go out twice (see README, Safety).
      this.outbox.markSent(id, ref.messageId, this.clock.now());
      this.onSent.delete(id);
      sent?.(ref);
      return ref;
    } catch (error) {
      const reason = errorMessage(error);
      const delivered = error instanceof PartialSendError ? error.partsSent : partsSent;
      if (attempts + 1 >= MAX_ATTEMPTS) {
        this.outbox.markFailed(id, reason);
        this.onSent.delete(id);
        this.logger.error({ session: sessionKey, platform, chat: target.chatId, err: reason, partsSent: delivered }, 'delivery failed for good');
      } else {
        const delay = Math.min(this.retryBaseMs * 2 ** attempts, 5 * 60_000);
        this.outbox.markRetry(id, reason, this.clock.now() + delay, delivered);
        this.logger.warn({ session: sessionKey, platform, chat: target.chatId, err: reason, retryInMs: delay, partsSent: delivered }, 'delivery failed; will retry');
      }
      return undefined;
    }
  }
}

function encode(message: OutboundMessage): string {
  const stored: StoredMessage = { ...message, file: message.file ? { ...message.file, data: message.file.data.toString('base64') } : undefined };
  return JSON.stringify(stored);
}

function decode(json: string): OutboundMessage {
  const stored = JSON.parse(json) as StoredMessage;
  return { ...stored, file: stored.file ? { ...stored.file, data: Buffer.from(stored.file.data, 'base64') } : undefined };
}
