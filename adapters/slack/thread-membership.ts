import type { WebClient } from '@slack/web-api';
import { MEMORY_LIMIT, remember } from './busy-indicator.js';
import type { SlackLogger } from './logger.js';
import type { SlackIdentity } from './normalize.js';
import { describeError, slackErrorCode } from './outbound.js';

/** conversations.replies: a page of at most this many messages, at most this many pages per thread. */
const REPLIES_PAGE_SIZE = 200;
const REPLIES_PAGES = 5;

/**
 * How long Slack's "hob has not posted in this thread" stands. Another hob process (several
 * processes share the workspace's events) may post there at any time without this one
 * hearing of it, so a "no" is asked again after this; a "yes" stands (hob never leaves).
 */
export const NOT_IN_THREAD_MS = 10_000;

/**
 * The channel threads hob is part of, where follow-ups need no mention. Known here when hob
 * was addressed or posted there since start; otherwise Slack is asked whether hob has
 * posted in the thread, so a restart forgets nothing. Both answers are kept, bounded; a "no"
 * for NOT_IN_THREAD_MS only.
 */
export class ThreadMembership {
  /** `channel:thread_ts` of channel threads hob is part of. */
  private readonly threads = new Set<string>();
  /** `channel:thread_ts` of channel threads Slack said hob has not posted in → when it said so. */
  private readonly notInThreads = new Map<string, number>();

  constructor(
    private readonly client: WebClient,
    private readonly logger: SlackLogger,
    private readonly now: () => number = Date.now,
  ) {}

  join(channel: string, threadTs: string): void {
    const key = `${channel}:${threadTs}`;
    remember(this.threads, key);
    this.notInThreads.delete(key);
  }

  async isMember(channel: string, threadTs: string, identity: SlackIdentity): Promise<boolean> {
    const key = `${channel}:${threadTs}`;
    if (this.threads.has(key)) return true;
    const saidNo = this.notInThreads.get(key);
    if (saidNo !== undefined && this.now() - saidNo < NOT_IN_THREAD_MS) return false;
    const posted = await this.hasPostedIn(channel, threadTs, identity);
    // hob may have posted there while Slack was being asked.
    if (this.threads.has(key)) return true;
    if (posted === 'yes') this.join(channel, threadTs);
    else if (posted === 'no') {
      this.notInThreads.delete(key);
      this.notInThreads.set(key, this.now());
      if (this.notInThreads.size > MEMORY_LIMIT) this.notInThreads.delete(this.notInThreads.keys().next().value as string);
    }
    return posted === 'yes';
  }

  /** conversations.replies: whether one of the thread's messages is hob's own ('unknown' when Slack could not say; asked again next time). */
  private async hasPostedIn(channel: string, threadTs: string, identity: SlackIdentity): Promise<'yes' | 'no' | 'unknown'> {
    const own = (message: { user?: string; bot_id?: string }) => message.user === identity.userId || (identity.botId !== undefined && message.bot_id === identity.botId);
    let cursor: string | undefined;
    try {
      for (let page = 0; page < REPLIES_PAGES; page += 1) {
        const result = await this.client.conversations.replies({ channel, ts: threadTs, limit: REPLIES_PAGE_SIZE, ...(cursor !== undefined ? { cursor } : {}) });
        if ((result.messages ?? []).some(own)) return 'yes';
        cursor = result.response_metadata?.next_cursor || undefined;
        if (!result.has_more || cursor === undefined) return 'no';
      }
      return 'no';
    } catch (error) {
      const code = slackErrorCode(error);
      if (code === 'thread_not_found') return 'no';
      const session = `slack:${channel}:${threadTs}`;
      if (code === 'missing_scope') {
        this.logger.warn({ session, method: 'conversations.replies', slackError: code }, 'slack cannot read threads, so follow-ups without a mention after a restart are missed; add the channels:history and groups:history scopes (adapters/slack/manifest.yaml) and reinstall the app');
      } else {
        this.logger.warn({ session, method: 'conversations.replies', ...describeError(error) }, 'slack could not tell whether hob is part of the thread; the message is taken as not addressed to hob');
      }
      // A refusal from Slack stands for this thread; a failed connection is asked again.
      return code === undefined ? 'unknown' : 'no';
    }
  }
}
