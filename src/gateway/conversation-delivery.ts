/**
 * A conversation's way out to its chat: the outbox (Delivery) bound to one chat and session
 * key. It knows one thing the outbox does not: whether hob is closing. From then on nothing
 * more is sent; what must still reach the person is recorded for the next start instead.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { OutboundMessage, SentRef, Target } from './channel.js';
import type { Delivery } from './delivery.js';
import type { AnswerAdoption, LiveRecorder, Recorded } from './delivery-ports.js';
import type { AnswerRecorder } from './reply.js';

export class ConversationDelivery implements AnswerRecorder {
  private isClosing = false;

  constructor(
    private readonly delivery: Delivery,
    private readonly platform: string,
    private readonly target: Target,
    private readonly sessionKey: string,
  ) {}

  /** hob is shutting down: runs are stopping and nothing more goes to the chat. */
  get closing(): boolean {
    return this.isClosing;
  }

  close(): void {
    this.isClosing = true;
  }

  /** Records and sends (see `Delivery.send`); while closing, only records. */
  async send(message: OutboundMessage): Promise<SentRef | undefined> {
    if (this.isClosing) {
      // hob is stopping: what must still reach the person goes out from the next start.
      this.delivery.record(this.platform, this.target, message, this.sessionKey);
      return undefined;
    }
    return this.delivery.send(this.platform, this.target, message, this.sessionKey);
  }

  /** The answer, which a live view may already show (see `Delivery.sendAnswer`); while closing, the live view goes and the answer is recorded. */
  async sendAnswer(messages: OutboundMessage[], live: AnswerAdoption): Promise<void> {
    if (!this.isClosing) {
      await this.delivery.sendAnswer(this.platform, this.target, messages, this.sessionKey, live);
      return;
    }
    await live.decline();
    for (const message of messages) await this.send(message);
  }

  /** Records a message to send in a moment (`sendRecorded`); undefined while closing (`send` then records it for the next start). */
  record(message: OutboundMessage): Recorded | undefined {
    return this.isClosing ? undefined : this.delivery.recordLeased(this.platform, this.target, message, this.sessionKey);
  }

  /** Sends what `record` recorded; when hob began closing since, leaves it due for the worker or the next start. */
  async sendRecorded(row: Recorded, message: OutboundMessage): Promise<SentRef | undefined> {
    if (!this.isClosing) return this.delivery.sendRecorded(row, this.platform, this.target, message, this.sessionKey);
    this.delivery.release(row.id);
    return undefined;
  }

  /** Withdraws what `record` recorded and will not be sent after all. */
  withdraw(row: Recorded): void {
    this.delivery.cancel(row.id, 'the answer changed before it was sent');
  }

  /** Sends at once, unrecorded (a progress message); nothing while closing. */
  async sendNow(message: OutboundMessage): Promise<SentRef | undefined> {
    return this.isClosing ? undefined : this.delivery.sendNow(this.platform, this.target, message, this.sessionKey);
  }

  /** A file the model sends (the `send_file` tool), captioned with its name unless given a caption. */
  async sendFile(path: string, caption?: string): Promise<void> {
    const data = await readFile(path);
    await this.send({ text: caption ?? basename(path), file: { name: basename(path), data, caption } });
  }

  /** Records the run's live messages as they show (see `Delivery.liveRecorder`). */
  liveRecorder(): LiveRecorder {
    return this.delivery.liveRecorder(this.platform, this.target, this.sessionKey);
  }
}
