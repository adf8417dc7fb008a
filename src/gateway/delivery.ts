import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { OutboxRepository } from '../store/outbox.js';
import { PartialSendError, type AdoptedAnswer, type ChannelAdapter, type OutboundMessage, type SentRef, type Target } from './channel.js';
import { decode, encode, type AnswerAdoption, type DeliveryFault, type DeliveryOptions, type LiveRecorder, type Recorded } from './delivery-ports.js';

export type { DeliveryOptions } from './delivery-ports.js';
import { deliveryKey, DeliveryRecovery } from './delivery-recovery.js';

const MAX_ATTEMPTS = 8;
/** How long one send attempt holds its row; longer than any platform call takes. */
const LEASE_MS = 120_000;

/**
 * The delivery outbox: every outgoing message is written to SQLite before the platform call
 * and marked with the platform's message id the moment the platform accepts it (each part of
 * a split message as it lands). A failed send is retried with backoff by the worker, also
 * after a restart; one whose outcome is unknown (a crash, a timeout) is first looked up in
 * the chat (DeliveryRecovery), so nothing is sent twice where the platform can be asked.
 * Live messages are recorded as they start, so a restart settles what a crash left. Edits of
 * progress messages are not recorded (they are ephemeral; the answer that follows is).
 */
export class Delivery {
  private readonly adapters = new Map<string, ChannelAdapter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** Who waits to learn where a delivery landed, also when a retry delivers it. */
  private readonly onSent = new Map<number, (ref: SentRef) => void>();
  private stopping = false;
  private readonly recovery: DeliveryRecovery;

  private readonly retryBaseMs: number;
  private readonly fault: ((point: DeliveryFault) => void) | undefined;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: DeliveryOptions = {},
  ) {
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.fault = options.fault;
    this.recovery = new DeliveryRecovery({
      ...(options.answerSince ? { answerSince: options.answerSince } : {}),
      outbox,
      clock,
      logger,
      adapter: (platform) => this.adapters.get(platform),
      decode,
      delivered: (id, ref) => this.delivered(id, ref),
      record: (target, row, message) => this.record(row.platform, target, message, row.sessionKey ?? undefined),
    });
  }

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
    const row = this.recordLeased(platform, target, message, sessionKey);
    track.recorded?.(row.id);
    if (track.sent) this.onSent.set(row.id, track.sent);
    return this.sendRecorded(row, platform, target, message, sessionKey);
  }

  /**
   * Delivers an answer that a live view (a draft, a stream, an edited message) may already
   * show. Every message is recorded first (the first one into the live message's own row),
   * so the live view is never the only copy; then `live.adopt` may make the live message the
   * answer, or its first messages: their rows are marked sent with it and only the rest go
   * out. Otherwise they are sent as `send` sends them. When an earlier message to this chat
   * still waits for a retry, the answer must not pass it: the live view is declined and the
   * rows wait in line. A crash at any step leaves rows a restart settles: the live message
   * becomes the recorded answer (or goes), and nothing is sent twice.
   */
  async sendAnswer(platform: string, target: Target, messages: OutboundMessage[], sessionKey: string | undefined, live: AnswerAdoption): Promise<SentRef | undefined> {
    const liveRow = live.liveRow();
    const rows = messages.map((message, index): { id: number; key?: string } => {
      if (index > 0 || liveRow === undefined) return this.recordLeased(platform, target, message, sessionKey);
      this.outbox.setLiveAnswer(liveRow, encode(message));
      return { id: liveRow };
    });
    const [first] = rows;
    if (first === undefined || this.outbox.blockedBy(first.id, platform, target.chatId, this.clock.now())) {
      await live.decline();
      const now = this.clock.now();
      if (liveRow !== undefined) this.outbox.liveToPending(liveRow, now, now);
      for (const row of rows) this.outbox.defer(row.id, 'waiting for an earlier message to this chat', now);
      return undefined;
    }
    this.fault?.('answer-recorded');
    const adopted = await live.adopt();
    if (liveRow !== undefined && !adopted) this.outbox.liveToPending(liveRow, this.clock.now(), this.clock.now() + LEASE_MS);
    const taken = adopted ? Math.min(rows.length, Math.max(1, adopted.parts)) : 0;
    if (adopted) this.fault?.('live-finished');
    let ref = adopted?.ref;
    for (const [index, row] of rows.entries()) {
      if (index < taken) this.outbox.markSent(row.id, (adopted as AdoptedAnswer).ref.messageId, this.clock.now());
      else ref = (await this.sendRecorded(row, platform, target, messages[index] as OutboundMessage, sessionKey)) ?? ref;
    }
    return ref;
  }

  /** Records the live messages of one run's answers as they show (see LiveRecorder). */
  liveRecorder(platform: string, target: Target, sessionKey?: string): LiveRecorder {
    return {
      creating: (preview) => {
        const now = this.clock.now();
        const id = this.outbox.addLive({ platform, chatId: target.chatId, threadId: target.threadId, sessionKey, preview, now });
        return { id, key: deliveryKey(id, now) };
      },
      started: (row, ref) => {
        this.outbox.setLiveMessage(row, ref.messageId);
        this.fault?.('live-started');
      },
      shown: () => this.fault?.('live-updated'),
      withdrawn: (row) => this.outbox.withdrawLive(row),
    };
  }

  /** A new row, leased: the caller sends it at once (`sendRecorded`), so the worker leaves it alone meanwhile. */
  recordLeased(platform: string, target: Target, message: OutboundMessage, sessionKey?: string): Recorded {
    const now = this.clock.now();
    const id = this.outbox.add({ platform, chatId: target.chatId, threadId: target.threadId, sessionKey, message: encode(message), now, leaseUntil: now + LEASE_MS });
    return { id, key: deliveryKey(id, now) };
  }

  /** Sends a recorded row now (unless an earlier one to the chat waits); `key` when the caller knows it. */
  sendRecorded(row: { id: number; key?: string }, platform: string, target: Target, message: OutboundMessage, sessionKey?: string): Promise<SentRef | undefined> {
    const { id } = row;
    const now = this.clock.now();
    const key = row.key ?? deliveryKey(id, this.outbox.createdAt(id) ?? now);
    if (this.outbox.blockedBy(id, platform, target.chatId, now)) {
      // An earlier message to this chat waits for a retry: this one goes out after it.
      this.outbox.defer(id, 'waiting for an earlier message to this chat', now);
      return Promise.resolve(undefined);
    }
    return this.attempt(id, key, platform, target, message, 0, 0, sessionKey);
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

  /** A row `recordLeased` recorded that is not sent now after all (hob is closing): due at once, as `record` leaves one. */
  release(id: number): void {
    this.outbox.defer(id, 'hob was closing', this.clock.now());
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

  /**
   * At start-up no send is in flight: rows a previous process leased are due again (and are
   * looked up before they are sent, as they may have reached the chat); live messages it left
   * are settled by `settleLeftLive`.
   */
  releaseLeases(): void {
    this.outbox.releaseLeases(this.clock.now());
    this.recovery.takeLeftLive();
  }

  /** Conversations taken over from a process that stopped or died: their live messages are left to settle (its sends were released with its node). */
  takeLeftLive(keys: ReadonlySet<string>): void {
    this.recovery.takeLeftLive(keys);
  }

  /** Settles the live messages a previous process left (see DeliveryRecovery); the next passes retry what failed. */
  settleLeftLive(): Promise<void> {
    return this.recovery.settleLeftLive();
  }

  /** Sends every due pending delivery once. Concurrent calls share one pass. */
  flush(): Promise<void> {
    this.flushing ??= this.flushDue().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** Oldest first; in each chat, nothing passes a message that is still failing or undecided. */
  private async flushDue(): Promise<void> {
    if (this.recovery.hasLeftLive) await this.recovery.settleLeftLive();
    // Every undecided row due now, in one look-up per chat (not only this pass's 50).
    const held = await this.recovery.resolve(this.outbox.due(this.clock.now(), 1000).filter((row) => row.unconfirmed));
    for (const row of this.outbox.due(this.clock.now())) {
      if (this.stopping) return;
      const chat = `${row.platform}:${row.chatId}`;
      if (!this.adapters.has(row.platform) || held.has(chat) || row.unconfirmed) {
        held.add(chat);
        continue;
      }
      if (this.outbox.blockedBy(row.id, row.platform, row.chatId, this.clock.now()) || !this.outbox.lease(row.id, this.clock.now(), this.clock.now() + LEASE_MS)) {
        held.add(chat);
        continue;
      }
      const target: Target = { chatId: row.chatId, ...(row.threadId ? { threadId: row.threadId } : {}) };
      const sent = await this.attempt(row.id, deliveryKey(row.id, row.createdAt), row.platform, target, decode(row.message), row.attempts, row.partsSent, row.sessionKey ?? undefined);
      if (!sent) held.add(chat);
    }
  }

  /** A delivery landed (a send, or a look-up found it): whoever waits hears where. */
  private delivered(id: number, ref: SentRef): void {
    const sent = this.onSent.get(id);
    this.onSent.delete(id);
    sent?.(ref);
  }

  private async attempt(
    id: number,
    key: string,
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
      let marked = false;
      const ref = await adapter.send(target, message, {
        ...(partsSent ? { skipParts: partsSent } : {}),
        deliveryKey: key,
        // Written down the moment the platform accepts each part: a kill after this line
        // cannot send it again; a kill before it leaves a row a look-up settles.
        onPartSent: (parts, messageId, last) => {
          if (!last) return this.outbox.markPartsSent(id, parts);
          this.outbox.markSent(id, messageId, this.clock.now());
          marked = true;
        },
      });
      if (!marked) this.outbox.markSent(id, ref.messageId, this.clock.now());
      this.delivered(id, ref);
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
