import type { Clock } from '../core/clock.js';
import type { ChannelAdapter, ChatType } from './channel.js';
import type { Conversation } from './conversation.js';

/** The conversation for a session key, made (in its chat) if the pool holds none: the gateway's one way to reach a conversation. */
export type OpenConversation = (key: string, adapter: ChannelAdapter, where: { chatId: string; threadId?: string }, chatType: ChatType) => Conversation;

/**
 * Conversations by session key, in least-recently-used order. Idle ones beyond the cap, or
 * idle longer than the timeout, drop their engine; the history stays in SQLite and is read
 * back on the next message.
 */
export class ConversationPool {
  private readonly conversations = new Map<string, Conversation>();

  constructor(
    private readonly clock: Clock,
    private readonly options: { maxConversations: number; idleTimeoutSeconds: number },
  ) {}

  get(key: string, create: () => Conversation): Conversation {
    let conversation = this.conversations.get(key);
    if (conversation) {
      this.conversations.delete(key); // re-insert: most recent last
    } else {
      conversation = create();
    }
    this.conversations.set(key, conversation);
    this.evictOverCap(key);
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
}
