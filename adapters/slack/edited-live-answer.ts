import type { LiveAnswer, LiveAnswerOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { EditedLiveAnswer } from '../../src/gateway/edited-live-answer.js';
import { partKey } from '../../src/gateway/send-parts.js';
import type { SlackLogger } from './logger.js';
import { describeError, fitted, type SlackOutbound } from './outbound.js';

/**
 * chat.update is a Tier 3 method: about 50 calls a minute for the app in a workspace. Live
 * answers take at most this many of them for edits while an answer is written, leaving the
 * rest to progress lines, approval outcomes and the final edits (which always go).
 */
const LIVE_UPDATES_PER_MINUTE = 40;

/** The workspace-wide allowance of chat.update calls for live answers, over a sliding minute. */
export class UpdateBudget {
  private readonly spent: number[] = [];

  constructor(
    private readonly perMinute = LIVE_UPDATES_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one call; false when this minute's are spent (that edit is skipped, a later one shows the newer text). */
  take(): boolean {
    const now = this.now();
    while ((this.spent[0] ?? Infinity) <= now - 60_000) this.spent.shift();
    if (this.spent.length >= this.perMinute) return false;
    this.spent.push(now);
    return true;
  }
}

export type EditedOptions = {
  outbound: SlackOutbound;
  logger: SlackLogger;
  /** Where the answer goes: the DM (top level) or the thread. */
  where: Target;
  intervalMs: number;
  budget: UpdateBudget;
  /** The live message became the answer (the busy indicator can go). */
  onAnswered(ref: SentRef): void;
};

/**
 * Live text where Slack cannot stream (a top-level DM: chat.startStream needs a thread; a
 * workspace that refuses streaming): one message posted with the first text and edited with
 * chat.update as the answer grows, at most once per `intervalMs` (1.2 s: Slack's limit is
 * about one a second) and within the workspace's Tier 3 allowance; it becomes the answer.
 */
export function slackEditedLiveAnswer(options: EditedOptions, live: LiveAnswerOptions): LiveAnswer {
  const { outbound, where } = options;
  return new EditedLiveAnswer(
    {
      post: async (text, key) => ({ ...where, messageId: await outbound.post(where, text, { plain: false }, key === undefined ? undefined : partKey(key, 0)) }),
      edit: (ref, text) => outbound.edit(ref, { text }),
      remove: (ref) => outbound.remove(ref),
      fit: (text) => fitted(text),
      mayEdit: () => options.budget.take(),
      answered: (ref) => options.onAnswered(ref),
      warn: (message, error) => options.logger.warn({ method: 'chat.update', ...describeError(error) }, `slack: ${message}`),
    },
    live,
    options.intervalMs,
  );
}
