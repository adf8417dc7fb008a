import type { InboundMessage } from './channel.js';

/** One inbound message, already recorded in the inbox. */
export type HeldMessage = { message: InboundMessage; inboxId: number };

export type CoalesceOptions = {
  /** Whether a text is so long that the platform probably cut it at its own limit: more follows. */
  isLong(message: InboundMessage): boolean;
  /** How long to wait for the next part of a long paste. */
  pasteWaitMs: number;
  /** How long to wait for the next photo of an album. */
  albumWaitMs: number;
};

type Batch = { userId: string; batchKey: string | undefined; parts: HeldMessage[]; timer: NodeJS.Timeout };

/**
 * Puts back together what the platform delivered apart: a long paste a platform cut into
 * messages at its length limit, or an album's photos (one message each, sharing a batch key).
 * Only such messages wait (briefly); every other message passes straight through, so an
 * ordinary reply is not slowed down.
 */
export class Coalescer {
  private readonly open = new Map<string, Batch>();

  constructor(
    private readonly options: CoalesceOptions,
    /** Receives the parts of a finished batch, in arrival order (one part when nothing followed). */
    private readonly release: (key: string, parts: HeldMessage[]) => void,
    /** Told each time a part joins a batch (so a crash while waiting keeps the parts together). */
    private readonly grouped: (parts: HeldMessage[]) => void = () => {},
  ) {}

  /** True when the message was taken into a batch (it comes out through `release`). */
  offer(key: string, held: HeldMessage): boolean {
    const batch = this.open.get(key);
    if (batch && this.belongs(batch, held.message)) {
      batch.parts.push(held);
      this.grouped(batch.parts);
      clearTimeout(batch.timer);
      // A paste ends with its first part shorter than the limit.
      if (!batch.batchKey && !this.isLong(held.message)) this.finish(key);
      else batch.timer = this.timer(key, batch.batchKey);
      return true;
    }
    if (batch) this.finish(key); // someone else, or something else: what was held goes first
    if (!this.startsBatch(held.message)) return false;
    const batchKey = held.message.batchKey;
    this.open.set(key, { userId: held.message.userId, batchKey, parts: [held], timer: this.timer(key, batchKey) });
    return true;
  }

  /** Releases every open batch now (shutdown: the parts are in the inbox either way). */
  flushAll(): void {
    for (const key of [...this.open.keys()]) this.finish(key);
  }

  private belongs(batch: Batch, message: InboundMessage): boolean {
    if (message.userId !== batch.userId || message.editedAfterSeconds !== undefined) return false;
    return batch.batchKey ? message.batchKey === batch.batchKey : message.batchKey === undefined;
  }

  private startsBatch(message: InboundMessage): boolean {
    return message.editedAfterSeconds === undefined && (message.batchKey !== undefined || this.isLong(message));
  }

  private isLong(message: InboundMessage): boolean {
    return this.options.isLong(message);
  }

  private timer(key: string, batchKey: string | undefined): NodeJS.Timeout {
    return setTimeout(() => this.finish(key), batchKey ? this.options.albumWaitMs : this.options.pasteWaitMs);
  }

  private finish(key: string): void {
    const batch = this.open.get(key);
    if (!batch) return;
    clearTimeout(batch.timer);
    this.open.delete(key);
    this.release(key, batch.parts);
  }
}
