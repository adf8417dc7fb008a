/** Every outgoing message in the Store port: recorded before it is sent, marked with the platform id after. */
import type { EncodedMessage } from './outbox-message.js';

export type OutboxRow = {
  id: number;
  platform: string;
  chatId: string;
  threadId: string | null;
  sessionKey: string | null;
  /** The message, in the outbox's one format (outbox-message.ts). */
  message: EncodedMessage;
  attempts: number;
  /** Parts of a split message already in the chat: a retry sends only the rest. */
  partsSent: number;
  /**
   * An earlier attempt may have delivered (more of) it: it was cut off by a crash or failed
   * with no answer from the platform. Looked up in the chat before it is sent again.
   */
  unconfirmed: boolean;
  /** When the row was recorded and when its last attempt started (ms). */
  createdAt: number;
  attemptedAt: number | null;
};

/** A live message a run showed in the chat (a stream, an edited message): see `addLive`. */
export type LiveRow = {
  id: number;
  platform: string;
  chatId: string;
  threadId: string | null;
  sessionKey: string | null;
  /** Its id, once the platform accepted it; undefined when hob died before it heard back. */
  platformMessageId: string | undefined;
  /** What it showed when it was created (to find it again when its id never came back). */
  preview: string;
  createdAt: number;
  /** The answer it is to become, once recorded (as OutboxRow's `message`); undefined while the run writes. */
  answer: EncodedMessage | undefined;
};

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'live' | 'withdrawn';

/**
 * Every outgoing message, recorded before it is sent and marked with the platform id after.
 * Sends are leased (`next_attempt_at` in the future) so two attempts never hold one row.
 */
export interface OutboxRepository {
  /**
   * Records a delivery. The caller sends it at once, so it is leased until `leaseUntil`: the
   * retry worker does not pick it up while that first send is in flight.
   */
  add(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; message: EncodedMessage; now: number; leaseUntil?: number }): number;
  /** The platform accepted it (its last part): from now on nothing sends it again. */
  markSent(id: number, platformMessageId: string, now: number): void;
  /** issue 7: parts of a split message already in the chat, recorded as each one lands. */
  markPartsSent(id: number, partsSent: number): void;
  /** A failed attempt: the platform may still have taken its message, so it is looked up before the retry. */
  markRetry(id: number, error: string, nextAttemptAt: number, partsSent?: number): void;
  /** A look-up settled what an earlier attempt delivered: `partsSent` parts are in the chat, the rest are not. */
  confirm(id: number, partsSent: number): void;
  /** Withdraws a delivery that has not gone out yet (its message no longer makes sense). */
  cancel(id: number, reason: string): boolean;
  markFailed(id: number, error: string): void;
  /** Leases a row for one send attempt; false when another attempt holds it. */
  lease(id: number, now: number, until: number): boolean;
  /**
   * At start-up no send is in flight: every pending delivery is due now. One the previous
   * process was sending (leased) may have reached the chat before it died: it is unconfirmed.
   */
  releaseLeases(now: number): void;
  /** When a row was recorded (a part of its delivery key). */
  createdAt(id: number): number | undefined;
  /**
   * Whether a message of the session to deliver (not a live message) was recorded at or after
   * `since` and before row `beforeId`: an answer whose rows were recorded before the live
   * message that was to show it (one created only as it finished) already holds that answer.
   */
  answerRecordedBefore(sessionKey: string, beforeId: number, since: number): boolean;
  /** Message ids hob recorded in a chat since `since`: never taken for another row's message. */
  knownIds(platform: string, chatId: string, since: number): Set<string>;
  /**
   * A live message about to be created in the chat, recorded before the platform call, with
   * what it will show: a crash leaves the row, and the restart finds the message (by the key
   * it carries, or by that text), then turns it into the answer or removes it.
   */
  addLive(entry: { platform: string; chatId: string; threadId?: string; sessionKey?: string; preview: string; now: number }): number;
  /** The platform accepted the live message: its id, the moment it is known. */
  setLiveMessage(id: number, platformMessageId: string): void;
  /** The answer the live message is to become (its first message), recorded before it is asked to. */
  setLiveAnswer(id: number, message: EncodedMessage): void;
  /** The live message is gone (removed, or it never became the answer). */
  withdrawLive(id: number): void;
  /** The live message did not become its answer: the answer is sent as an ordinary message, leased to the caller. */
  liveToPending(id: number, now: number, leaseUntil: number): void;
  /** Live messages still recorded as showing (at start-up: what a crash left in the chats). */
  liveRows(): LiveRow[];
  /**
   * Whether an earlier message to the same chat waits to be sent (it failed, or it waits in
   * line): this one must wait behind it, or the person would read the answer out of order.
   * A first attempt in flight does not hold others back; a deferred or failed one does, also
   * while the worker is sending it (it carries a last_error).
   */
  blockedBy(id: number, platform: string, chatId: string, now: number): boolean;
  /** Leaves a delivery to the worker without counting an attempt (it waits in line). */
  defer(id: number, reason: string, nextAttemptAt: number): void;
  /** Pending deliveries that are due, oldest first. */
  due(now: number, limit?: number): OutboxRow[];
  counts(): Record<OutboxStatus, number>;
}
