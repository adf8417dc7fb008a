import type { LiveAnswer, SentRef, Target } from '../../src/gateway/channel.js';
import { liveMessage, type PageMessage } from './page-events.js';

/** How often a live answer is redrawn at most: smooth to read, few events on the stream. */
export const LIVE_INTERVAL_MS = 80;

/** What a live answer does to the chat (the adapter keeps live messages for pages that open meanwhile). */
export type LiveSurface = {
  show(chatId: string, message: PageMessage): void;
  withdraw(chatId: string, liveId: string): void;
  /** Stores the final text as a message that takes the live one's place on the pages. */
  become(chatId: string, liveId: string, finalText: string): SentRef;
};

/**
 * An answer shown while it is written (`streaming: native`): one live message on the page,
 * redrawn at most every `intervalMs`, that becomes the stored answer on `finish` (the page
 * swaps it in place), or goes away on `cancel`. Live text is never stored: a restart in the
 * middle of an answer leaves nothing half-written behind.
 */
export class WebLiveAnswer implements LiveAnswer {
  private latest = '';
  private shown = '';
  private lastShownAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  private readonly startedAt: number;

  constructor(
    private readonly surface: LiveSurface,
    private readonly target: Target,
    private readonly id: string,
    private readonly maxLength: number,
    private readonly intervalMs = LIVE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  update(text: string): void {
    if (this.ended || text.trim() === '') return;
    this.latest = text;
    if (this.timer) return;
    const wait = Math.max(0, this.lastShownAt + this.intervalMs - this.now());
    if (wait === 0) return this.flush();
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  async finish(finalText: string): Promise<SentRef | undefined> {
    this.end();
    try {
      return this.surface.become(this.target.chatId, this.id, finalText);
    } catch {
      // The gateway sends the answer the ordinary way; what was shown must not stay as a second copy.
      this.surface.withdraw(this.target.chatId, this.id);
      return undefined;
    }
  }

  async cancel(): Promise<void> {
    this.end();
    if (this.shown !== '') this.surface.withdraw(this.target.chatId, this.id);
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.ended) return;
    // While longer than one message, its start with "…": the gateway sends a long answer in parts.
    const display = this.latest.length > this.maxLength ? `${this.latest.slice(0, this.maxLength - 1)}…` : this.latest;
    if (display === this.shown) return;
    this.surface.show(this.target.chatId, liveMessage(this.id, display, this.startedAt));
    this.shown = display;
    this.lastShownAt = this.now();
  }
}
