import type { AgentEvent } from '../core/events.js';
import type { ChannelAdapter, Target } from './channel.js';
import type { LiveAnswerFeed } from './live-answer.js';
import type { LiveView } from './reply.js';

/**
 * How long a run may take before hob shows that it is working on it. Most answers of a fast
 * model come sooner, and then the answer is the only thing the person sees arrive.
 */
export const BUSY_AFTER_MS = 1000;
/** A typing sign lasts about 5 s on the platform that shows it shortest; it is renewed a little before that. */
const TYPING_RENEW_MS = 4000;

type SlowRunOptions = {
  adapter: ChannelAdapter;
  target: Target;
  /** The run's signal: once it aborts, nothing more is shown. */
  signal: AbortSignal;
  /** The run's live answer, when the channel shows one. */
  feed?: LiveAnswerFeed;
  /** Milliseconds before a run counts as slow; 0 shows everything from the start. */
  afterMs: number;
};

/**
 * What a run shows while the person waits — the platform's busy sign (`typing`: a typing
 * indicator, a 👀 reaction or an assistant status, as the adapter does it) and the live
 * answer — but only once the run turns out slow: after `afterMs`, at its first tool call,
 * refused call or compaction, or when it waits for a person (an approval, a question). A quick answer is then one message
 * and nothing else: no indicator to send and take back, no preview to replace (each costs
 * platform calls under rate limits). Until then the live answer's text is held, and given to
 * it whole when the run turns slow; text before tool calls is a preamble the feed would cancel,
 * so it is dropped unseen.
 */
export class SlowRun {
  /** The live answer as the run's reporter sees it: held until the run is slow. */
  readonly live: LiveView | undefined;
  private slow = false;
  private ended = false;
  private paused = 0;
  private held = '';
  private readonly timer: NodeJS.Timeout | undefined;
  private typingTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SlowRunOptions) {
    const { feed } = options;
    this.live = feed && {
      onEvent: (event) => this.feedEvent(feed, event),
      cancel: (options) => feed.cancel(options),
      adopt: (answer) => feed.adopt(answer),
      get showing() {
        return feed.showing;
      },
      get liveRow() {
        return feed.liveRow;
      },
    };
    options.signal.addEventListener('abort', () => this.stop(), { once: true });
    if (options.afterMs <= 0) {
      this.showBusy();
    } else {
      this.timer = setTimeout(() => this.showBusy(), options.afterMs);
      this.timer.unref();
    }
  }

  /** Sees every run event (before the reporter does): work the person should see going on makes the run slow. */
  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'tool_started':
      case 'tool_refused':
      case 'approval_requested':
      case 'compaction':
        this.showBusy();
        break;
      default:
        break;
    }
  }

  /** While the run waits for a person it counts as slow, but shows no typing. */
  async whilePaused<T>(wait: () => Promise<T>): Promise<T> {
    this.paused += 1;
    this.showBusy();
    try {
      return await wait();
    } finally {
      this.paused -= 1;
      if (this.paused === 0) this.renewTyping();
    }
  }

  /** The run is over: nothing more is shown. */
  stop(): void {
    this.ended = true;
    clearTimeout(this.timer);
    clearInterval(this.typingTimer);
  }

  private showBusy(): void {
    if (this.slow || this.ended) return;
    this.slow = true;
    clearTimeout(this.timer);
    if (this.held && this.options.feed) this.options.feed.onEvent({ type: 'text_delta', text: this.held });
    this.held = '';
    this.renewTyping();
    this.typingTimer = setInterval(() => this.renewTyping(), TYPING_RENEW_MS);
    this.typingTimer.unref();
  }

  private renewTyping(): void {
    if (!this.slow || this.ended || this.paused > 0) return;
    // A missing indicator is cosmetic; adapters log their own failures.
    void this.options.adapter.typing(this.options.target).catch(() => undefined);
  }

  private feedEvent(feed: LiveAnswerFeed, event: AgentEvent): void {
    if (this.slow) return feed.onEvent(event);
    switch (event.type) {
      case 'text_delta':
        this.held += event.text;
        break;
      case 'retry':
      case 'assistant_message':
        // A retried call writes its text again; a finished turn's text is the answer (sent as
        // usual) or a preamble to tool calls (never shown).
        this.held = '';
        break;
      default:
        break;
    }
  }
}
