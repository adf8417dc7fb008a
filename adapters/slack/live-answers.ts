import type { WebClient } from '@slack/web-api';
import type { LiveAnswer, LiveAnswerOptions, Target } from '../../src/gateway/channel.js';
import type { BusyIndicator } from './busy-indicator.js';
import { slackEditedLiveAnswer, UpdateBudget } from './edited-live-answer.js';
import { SlackLiveAnswer } from './live-answer.js';
import type { SlackLogger } from './logger.js';
import { threadOf, type SlackOutbound } from './outbound.js';

export type SlackLiveDeps = {
  client: WebClient;
  outbound: SlackOutbound;
  logger: SlackLogger;
  busy: BusyIndicator;
  /** The workspace, known once the adapter started (a stream outside DMs names its recipient's team). */
  teamId(): string | undefined;
  /** Streams: flush at least this often, and when this many characters wait. */
  flushMs: number;
  flushChars: number;
  /** Edited live answers: at most one edit this often, in DMs and elsewhere. */
  editIntervalMs: { dm: number; group: number };
};

/**
 * Which live answer a Slack chat gets: a stream (chat.startStream) where Slack allows one — in
 * a thread, with the recipient named outside DMs — and elsewhere (a top-level DM, a
 * workspace that refused streaming) one message edited as the answer grows.
 */
export class SlackLiveAnswers {
  private streamingRefused = false;
  /** chat.update's Tier 3 allowance, shared by every edited live answer of the workspace. */
  private readonly updates = new UpdateBudget();

  constructor(private readonly deps: SlackLiveDeps) {}

  start(target: Target, options: LiveAnswerOptions): LiveAnswer {
    const { deps } = this;
    const threadTs = threadOf(target, options.replyTo);
    const where = { chatId: target.chatId, ...(threadTs !== undefined ? { threadId: threadTs } : {}) };
    const onAnswered = () => void deps.busy.sent(where, { text: 'the live answer' });
    const teamId = deps.teamId();
    if (this.streamingRefused || threadTs === undefined || (options.chatType !== 'dm' && teamId === undefined)) {
      const intervalMs = options.chatType === 'dm' ? deps.editIntervalMs.dm : deps.editIntervalMs.group;
      return slackEditedLiveAnswer({ outbound: deps.outbound, logger: deps.logger, where, intervalMs, budget: this.updates, onAnswered }, options);
    }
    return new SlackLiveAnswer({
      client: deps.client,
      logger: deps.logger,
      channel: target.chatId,
      threadTs,
      ...(options.chatType !== 'dm' && teamId !== undefined ? { recipient: { teamId, userId: options.userId } } : {}),
      flushMs: deps.flushMs,
      flushChars: deps.flushChars,
      onRefused: () => {
        this.streamingRefused = true;
      },
      onAnswered,
      ...(options.onCreating ? { onCreating: options.onCreating } : {}),
      ...(options.onShown ? { onShown: options.onShown } : {}),
    });
  }
}
