import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { LiveRow, OutboxRepository, OutboxRow } from '../store/outbox.js';
import { encodeOutboxMessage, type EncodedMessage } from '../store/outbox-message.js';
import type { ChannelAdapter, OutboundMessage, SentRef, Target, UnconfirmedDelivery } from './channel.js';
import { splitMessage } from './format/split.js';

/** How far back a look-up treats hob's recorded messages as taken (they can never be a cut-off send's). */
const KNOWN_WINDOW_MS = 10 * 60_000;

/** The key a delivery carries to the platform (a message nonce, message metadata): its row, and when it was recorded. */
export function deliveryKey(id: number, createdAt: number): string {
  return `${id.toString(36)}.${createdAt.toString(36)}`;
}

export type RecoveryDeps = {
  outbox: OutboxRepository;
  clock: Clock;
  logger: Logger;
  adapter(platform: string): ChannelAdapter | undefined;
  decode(stored: EncodedMessage): OutboundMessage;
  /** A row found delivered: whoever waits for it hears where it landed. */
  delivered(id: number, ref: SentRef): void;
  /** Records a message for the worker (the rest of an answer found in the session). */
  record(target: Target, row: LiveRow, message: OutboundMessage): void;
  /** The answer a session's run stored since a time (see DeliveryOptions.answerSince). */
  answerSince?(sessionKey: string, since: number): string | undefined;
};

/**
 * What a crash, or a send with no answer, left undecided, settled before anything is sent
 * again: live messages the previous process showed become their answer or go, and a
 * delivery that may have reached the chat is looked up there (once per chat) so nothing is
 * sent twice. Platforms that cannot be asked deliver such a row at least once.
 */
export class DeliveryRecovery {
  /** Live messages a previous process left, still to settle (read once at start-up). */
  private leftLive: LiveRow[] = [];

  constructor(private readonly deps: RecoveryDeps) {}

  /**
   * At start-up: the live rows still recorded are the previous process's. With `keys`, only
   * those conversations' (taken over from another process that stopped or died: the live
   * messages other conversations show are their own processes' runs).
   */
  takeLeftLive(keys?: ReadonlySet<string>): void {
    if (!keys) {
      this.leftLive = this.deps.outbox.liveRows();
      return;
    }
    const known = new Set(this.leftLive.map((row) => row.id));
    this.leftLive.push(...this.deps.outbox.liveRows().filter((row) => row.sessionKey !== null && keys.has(row.sessionKey) && !known.has(row.id)));
  }

  get hasLeftLive(): boolean {
    return this.leftLive.length > 0;
  }

  /**
   * Each live message a crash left becomes its recorded answer, or is removed when the run
   * had not finished it (the resumed run answers anew). One the platform cannot settle now
   * stays for the next pass; its answer is then not sent before it.
   */
  async settleLeftLive(): Promise<void> {
    const left = this.leftLive.splice(0);
    for (const row of left) {
      const adapter = this.deps.adapter(row.platform);
      if (!adapter) {
        this.leftLive.push(row);
        continue;
      }
      const target: Target = { chatId: row.chatId, ...(row.threadId ? { threadId: row.threadId } : {}) };
      const answer = row.answer === undefined ? this.storedAnswer(row) : this.deps.decode(row.answer);
      try {
        // Created, but hob died before it heard back: the message is looked up by its key or text.
        const messageId = row.platformMessageId ?? (await this.findLive(adapter, target, row));
        const became = messageId !== undefined && adapter.settleLive ? await adapter.settleLive({ ...target, messageId }, answer) : false;
        const now = this.deps.clock.now();
        if (became) {
          this.deps.outbox.markSent(row.id, messageId as string, now);
        } else if (answer) {
          // The message is gone: its answer goes out as an ordinary message, now.
          this.deps.outbox.liveToPending(row.id, now, now);
        } else {
          this.deps.outbox.withdrawLive(row.id);
        }
        this.deps.logger.info({ session: row.sessionKey ?? undefined, platform: row.platform, found: messageId !== undefined, became }, 'settled a live answer a restart left');
      } catch (error) {
        this.deps.logger.warn({ session: row.sessionKey ?? undefined, platform: row.platform, err: errorMessage(error) }, 'could not settle a live answer a restart left; will try again');
        this.leftLive.push(row);
      }
    }
  }

  /**
   * The run finished its answer but died before the outbox had it: the answer the session
   * stored, split as the channel sends it (the first part here, the rest as new rows).
   * A live message created only as the answer finished (a stream started by its final text)
   * came after the answer's own rows, which deliver it: that message goes. Its row and the
   * answer can share a millisecond, so the stored answer's time alone cannot tell.
   */
  private storedAnswer(row: LiveRow): OutboundMessage | undefined {
    const session = row.sessionKey;
    const text = session ? this.deps.answerSince?.(session, row.createdAt) : undefined;
    if (!session || text === undefined || this.deps.outbox.answerRecordedBefore(session, row.id, row.createdAt)) return undefined;
    const limit = this.deps.adapter(row.platform)?.capabilities.maxMessageLength ?? Infinity;
    const [first, ...rest] = splitMessage(text, limit);
    const target: Target = { chatId: row.chatId, ...(row.threadId ? { threadId: row.threadId } : {}) };
    if (first === undefined) return undefined;
    this.deps.outbox.setLiveAnswer(row.id, encodeOutboxMessage({ text: first }));
    for (const part of rest) this.deps.record(target, row, { text: part });
    return { text: first };
  }

  /** A live message whose creation hob never heard back about, found in the chat (or not there). */
  private async findLive(adapter: ChannelAdapter, target: Target, row: LiveRow): Promise<string | undefined> {
    if (!adapter.findDelivered) return undefined;
    const key = deliveryKey(row.id, row.createdAt);
    const known = this.deps.outbox.knownIds(row.platform, row.chatId, row.createdAt - KNOWN_WINDOW_MS);
    const found = await adapter.findDelivered(target, [{ key, message: { text: row.preview, plain: false }, partsSent: 0, since: row.createdAt }], known);
    return found.get(key)?.messageId;
  }

  /**
   * Looks the unconfirmed rows up in their chats (one look-up per chat): what is there is
   * marked (sent, or the parts that arrived), so the next attempt sends only what is not.
   * Returns the chats (`platform:chat`) that could not be asked: their rows wait for the next pass.
   */
  async resolve(rows: OutboxRow[]): Promise<Set<string>> {
    const held = new Set<string>();
    const byChat = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      if (!row.unconfirmed) continue;
      const chat = `${row.platform}:${row.chatId}:${row.threadId ?? ''}`;
      byChat.set(chat, [...(byChat.get(chat) ?? []), row]);
    }
    for (const [chat, waiting] of byChat) {
      const [head] = waiting;
      const adapter = head ? this.deps.adapter(head.platform) : undefined;
      if (!head || !adapter) continue;
      if (!adapter.findDelivered) {
        // No way to ask: the row is sent again (at least once).
        for (const row of waiting) this.deps.outbox.confirm(row.id, row.partsSent);
        continue;
      }
      const target: Target = { chatId: head.chatId, ...(head.threadId ? { threadId: head.threadId } : {}) };
      const deliveries: UnconfirmedDelivery[] = waiting.map((row) => ({
        key: deliveryKey(row.id, row.createdAt),
        message: this.deps.decode(row.message),
        partsSent: row.partsSent,
        since: row.attemptedAt ?? row.createdAt,
      }));
      const since = Math.min(...deliveries.map((delivery) => delivery.since));
      try {
        const found = await adapter.findDelivered(target, deliveries, this.deps.outbox.knownIds(head.platform, head.chatId, since - KNOWN_WINDOW_MS));
        for (const [index, row] of waiting.entries()) {
          const hit = found.get((deliveries[index] as UnconfirmedDelivery).key);
          if (hit?.complete) {
            this.deps.outbox.markSent(row.id, hit.messageId, this.deps.clock.now());
            this.deps.delivered(row.id, { ...target, messageId: hit.messageId });
          } else {
            this.deps.outbox.confirm(row.id, hit?.partsSent ?? row.partsSent);
          }
        }
        if (found.size) this.deps.logger.info({ platform: head.platform, chat: head.chatId, found: found.size, of: waiting.length }, 'found deliveries a cut-off send had made; not sending them again');
      } catch (error) {
        this.deps.logger.warn({ platform: head.platform, chat: head.chatId, err: errorMessage(error) }, 'could not look up what a cut-off send delivered; will try again');
        held.add(`${head.platform}:${head.chatId}`);
      }
    }
    return held;
  }
}
