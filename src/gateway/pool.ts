import type { Clock } from '../core/clock.js';
import type { ChannelAdapter, ChatType } from './channel.js';
import type { Conversation } from './conversation.js';

/** The conversation for a session key, made (in its chat) if the pool holds none: the gateway's one way to reach a conversation. */
export type OpenConversation = (key: string, adapter: ChannelAdapter, where: { chatId: string; threadId?: string }, chatType: ChatType) => Conversation;

/**
 * How much memory the histories held between messages may take together (about; see
 * SessionState.heldBytes). A history is a copy of the store's rows, sent whole with each
 * request: held, the next message needs no reading; let go, it is read back (one query and a
 * parse per row, well under a millisecond for a few hundred short messages). Without a bound
 * every conversation written to within `idle_timeout_seconds` kept all of its history in
 * memory, so a gateway with many people writing grew for as long as they wrote (~0.7 KB a
 * message in bench/memory-where.ts's soak of 30 people). 1 MiB holds a few thousand short
 * messages, or one conversation near a large model window.
 */
export const HELD_HISTORY_BYTES = 1024 * 1024;

/**
 * Conversations by session key, in least-recently-used order. Idle ones beyond the cap, or
 * idle longer than the timeout, drop their engine; the history stays in SQLite and is read
 * back on the next message. While the histories held take more than `heldHistoryBytes`, the
 * least recently used idle ones let theirs go (read back the same way).
 */
export class ConversationPool {
  private readonly conversations = new Map<string, Conversation>();
  private readonly heldHistoryBytes: number;
  /** The conversations handed out since the budget was last looked at (`keepHistoriesWithin`). */
  private readonly handedOut = new Set<string>();
  private budgetCheck: NodeJS.Immediate | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly options: { maxConversations: number; idleTimeoutSeconds: number; heldHistoryBytes?: number },
  ) {
    this.heldHistoryBytes = options.heldHistoryBytes ?? HELD_HISTORY_BYTES;
  }

  get(key: string, create: () => Conversation): Conversation {
    let conversation = this.conversations.get(key);
    if (conversation) {
      this.conversations.delete(key); // re-insert: most recent last
    } else {
      conversation = create();
    }
    this.conversations.set(key, conversation);
    this.evictOverCap(key);
    this.handedOut.add(key);
    this.budgetCheck ??= setImmediate(() => this.keepHistoriesWithin()).unref();
    return conversation;
  }

  peek(key: string): Conversation | undefined {
    return this.conversations.get(key);
  }

  get size(): number {
    return this.conversations.size;
  }

  all(): Conversation[] {
    return [...this.conversations.values()];
  }

  /** Evicts idle conversations past the idle timeout. Returns how many were evicted. */
  sweep(): number {
    const cutoff = this.clock.now() - this.options.idleTimeoutSeconds * 1000;
    let evicted = 0;
    for (const [key, conversation] of this.conversations) {
      if (conversation.lastActive <= cutoff && conversation.evict()) {
        this.conversations.delete(key);
        evicted += 1;
      }
    }
    return evicted;
  }

  /** Evicts every idle conversation (benchmarks, shutdown). */
  evictAll(): number {
    let evicted = 0;
    for (const [key, conversation] of this.conversations) {
      if (conversation.evict()) {
        this.conversations.delete(key);
        evicted += 1;
      }
    }
    return evicted;
  }

  /**
   * Drops least-recently-used idle conversations beyond the cap, never `keep` (the one just
   * handed out: it is about to get a message, so dropping it would let a second Conversation
   * for the same chat run beside it). Busy ones stay too; the cap is soft while all are busy.
   */
  private evictOverCap(keep: string): void {
    if (this.conversations.size <= this.options.maxConversations) return;
    for (const [key, conversation] of this.conversations) {
      if (this.conversations.size <= this.options.maxConversations) return;
      if (key !== keep && conversation.evict()) this.conversations.delete(key);
    }
  }

  /**
   * Lets the least recently used idle conversations' histories go while those held take more
   * than the budget; never one handed out since the last look (its message is about to be
   * answered with it). Once a turn of the event loop, after the messages of that turn were
   * handed out: it reads every conversation's size, and a burst of people writing at once would
   * otherwise read them all once per message.
   */
  private keepHistoriesWithin(): void {
    this.budgetCheck = undefined;
    let held = 0;
    for (const conversation of this.conversations.values()) held += conversation.heldBytes;
    for (const [key, conversation] of this.conversations) {
      if (held <= this.heldHistoryBytes) break;
      const bytes = conversation.heldBytes;
      if (bytes > 0 && !this.handedOut.has(key) && conversation.releaseHistory()) held -= bytes;
    }
    this.handedOut.clear();
  }
}
