import type { WebClient } from '@slack/web-api';
import type { OutboundMessage, Target } from '../../src/gateway/channel.js';
import type { SlackLogger } from './logger.js';
import { describeError } from './outbound.js';

/** Threads and messages remembered per process: bounded. */
export const MEMORY_LIMIT = 10_000;
const BUSY_REACTION = 'eyes';

/**
 * Shows that hob is working on a message. In the assistant pane: its status ("is
 * thinking…", or the tool in use, "is running bash…"; Slack clears it when hob posts).
 * Elsewhere: a reaction on the person's message, taken off once the answer is out (progress
 * lines and prompts with buttons are not the answer). Never throws: a missing indicator is
 * cosmetic.
 */
export class BusyIndicator {
  /** `channel:thread_ts` of assistant-pane threads. */
  private readonly assistantThreads = new Set<string>();
  /** Per chat/thread: the person's latest message (the reaction goes on it). */
  private readonly latestInbound = new Map<string, string>();
  /** Per chat/thread: the message carrying the reaction now. */
  private readonly reacted = new Map<string, string>();
  /** Per assistant thread: the status shown now. */
  private readonly statuses = new Map<string, string>();

  constructor(
    private readonly client: WebClient,
    private readonly logger: SlackLogger,
  ) {}

  /** A thread of the assistant pane: status instead of reactions. */
  assistantThread(channel: string, threadTs: string): void {
    remember(this.assistantThreads, `${channel}:${threadTs}`);
  }

  /** A person's message arrived in this chat/thread. */
  received(where: { chatId: string; threadId?: string }, messageTs: string): void {
    this.latestInbound.set(keyOf(where), messageTs);
    trim(this.latestInbound);
  }

  async working(target: Target): Promise<void> {
    const key = keyOf(target);
    try {
      if (this.assistantThreads.has(key) && target.threadId !== undefined) return await this.setStatus(target.chatId, target.threadId, 'is thinking…');
      const ts = this.latestInbound.get(key);
      if (ts === undefined || this.reacted.get(key) === ts) return;
      this.reacted.set(key, ts);
      trim(this.reacted);
      await this.client.reactions.add({ channel: target.chatId, timestamp: ts, name: BUSY_REACTION });
    } catch (error) {
      this.logger.warn({ method: 'busy indicator', ...describeError(error) }, 'slack busy indicator failed');
    }
  }

  /** After a message to a chat: when it is the answer, the reaction goes. */
  async sent(target: { chatId: string; threadId?: string }, message: OutboundMessage): Promise<void> {
    const key = keyOf(target);
    if (this.assistantThreads.has(key)) {
      // Slack cleared the status when hob posted; a progress line shows the tool instead.
      this.statuses.delete(key);
      await this.edited(target, message);
      return;
    }
    const ts = this.reacted.get(key);
    if (ts === undefined || isProgress(message) || (message.buttons ?? []).some((row) => row.length > 0)) return;
    this.reacted.delete(key);
    await this.client.reactions
      .remove({ channel: target.chatId, timestamp: ts, name: BUSY_REACTION })
      .catch((error: unknown) => this.logger.warn({ method: 'reactions.remove', ...describeError(error) }, 'slack could not remove the busy reaction'));
  }

  /** A message was edited: in the assistant pane a progress line names the tool in use. */
  async edited(where: { chatId: string; threadId?: string }, message: OutboundMessage): Promise<void> {
    if (where.threadId === undefined || !this.assistantThreads.has(keyOf(where)) || !isProgress(message)) return;
    const running = message.text.split('\n').filter((line) => line.startsWith('⏳ ')).at(-1);
    const tool = running ? /^\u23F3 ([^:]+):/.exec(running)?.[1] : undefined;
    await this.setStatus(where.chatId, where.threadId, tool ? `is running ${tool}…` : 'is thinking…').catch((error: unknown) =>
      this.logger.warn({ method: 'assistant.threads.setStatus', ...describeError(error) }, 'slack status failed'),
    );
  }

  private async setStatus(channel: string, threadTs: string, status: string): Promise<void> {
    const key = `${channel}:${threadTs}`;
    if (this.statuses.get(key) === status) return;
    this.statuses.set(key, status);
    trim(this.statuses);
    await this.client.assistant.threads.setStatus({ channel_id: channel, thread_ts: threadTs, status });
  }
}

/** Adds to a bounded set (the oldest entry goes). */
export function remember(set: Set<string>, key: string): void {
  set.add(key);
  if (set.size > MEMORY_LIMIT) set.delete(set.values().next().value as string);
}

function trim(map: Map<string, string>): void {
  if (map.size > MEMORY_LIMIT) map.delete(map.keys().next().value as string);
}

function keyOf(target: { chatId: string; threadId?: string }): string {
  return `${target.chatId}:${target.threadId ?? ''}`;
}

/** The gateway's progress message: plain lines of ⏳/✅/❌ tool lines. */
function isProgress(message: OutboundMessage): boolean {
  return message.plain === true && message.text.split('\n').every((line) => /^(\u23F3|\u2705|\u274C) /.test(line));
}
