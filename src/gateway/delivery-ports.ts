import { decodeOutboxMessage, encodeOutboxMessage, type EncodedMessage } from '../store/outbox-message.js';
import type { AdoptedAnswer, OutboundMessage, SentRef } from './channel.js';

/** What the delivery outbox (Delivery) offers and asks of its callers: live answers, options, stored messages. */

/** How an answer's live view is offered to become the answer (see `Delivery.sendAnswer`). */
export type AnswerAdoption = {
  /** The live message's outbox row, when it was recorded: the answer's first message is written into it. */
  liveRow(): number | undefined;
  /** The live message and how many of the answer's messages it now shows, or undefined. Must not throw. */
  adopt(): Promise<AdoptedAnswer | undefined>;
  /** Ends the live view, leaving its row to the caller: the answer is sent normally later. Must not throw. */
  decline(): Promise<void>;
};

/** How a live view's message is recorded as it shows (see `Delivery.liveRecorder`). */
export type LiveRecorder = {
  /** The live message is about to be created, showing `preview`: its row, and the key it carries. */
  creating(preview: string): Recorded;
  /** The platform accepted it: its id, recorded at once. */
  started(row: number, ref: SentRef): void;
  /** The platform took more of its text. */
  shown(row: number): void;
  /** It no longer is a live message to settle: removed, or recorded by the answer's own rows. */
  withdrawn(row: number): void;
};

/**
 * Crash-test hooks: where `hob start` may be killed on purpose (HOB_FAULT=delivery:<point>):
 * a live message recorded, more of it shown, its answer recorded, the platform's "ok" for
 * the end of it taken before the outbox mark.
 */
export type DeliveryFault = 'live-started' | 'live-updated' | 'answer-recorded' | 'live-finished';

export type DeliveryOptions = {
  /** The first retry waits this long, doubling after each failure (default 1 s). */
  retryBaseMs?: number;
  fault?: (point: DeliveryFault) => void;
  /**
   * The answer a session's run stored since a time, if that is how it ended: a live message a
   * crash left before its answer reached the outbox becomes that answer after the restart.
   */
  answerSince?(sessionKey: string, since: number): string | undefined;
};

/** A row just recorded, and the key its messages carry to the platform. */
export type Recorded = { id: number; key: string };

/** A message as the outbox stores it (src/store/outbox-message.ts). */
export const encode = (message: OutboundMessage): EncodedMessage => encodeOutboxMessage(message);

export const decode = (stored: EncodedMessage): OutboundMessage => decodeOutboxMessage<OutboundMessage>(stored);
