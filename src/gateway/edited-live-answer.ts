import type { AdoptedAnswer, FinalAnswer, LiveAnswer, LiveAnswerOptions, SentRef } from './channel.js';

/** What an answer shown by editing one message needs from its platform. */
export type LiveMessageOps = {
  /**
   * Posts the live message (in groups, replying to the question) carrying `key` where the
   * platform keeps one (as `send` does for part 0 of a delivery); resolves with its ref.
   */
  post(text: string, key: string | undefined): Promise<SentRef>;
  edit(ref: SentRef, text: string): Promise<void>;
  /** Removes it; a message already gone must not throw. */
  remove(ref: SentRef): Promise<void>;
  /** What one message shows of a text that may be too long for it (its head, marked "…"); never blank. */
  fit(text: string): string;
  /** Whether an edit while the answer is written may go now (a platform-wide budget); the final edit always goes. */
  mayEdit?(): boolean;
  /** The live message became the answer. */
  answered?(ref: SentRef): void;
  warn(message: string, error: unknown): void;
};

/**
 * An answer shown while it is written by editing one message (for platforms that cannot
 * stream it): the first text posts the message, later text edits it, at most once per
 * `intervalMs` and only when `mayEdit` allows. `finish` edits it into the answer's first part
 * (the gateway sends the other parts after it), so a long answer costs no message that is
 * posted and then deleted. When that cannot be done, what was shown is removed and the
 * gateway sends the answer as usual: never two copies, never none.
 */
export class EditedLiveAnswer implements LiveAnswer {
  private latest = '';
  private shown = '';
  private ref: SentRef | undefined;
  private posting = false;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastEditAt = 0;
  private ended = false;

  constructor(
    private readonly ops: LiveMessageOps,
    private readonly options: Pick<LiveAnswerOptions, 'onCreating' | 'onShown'>,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  update(text: string): void {
    if (this.ended || text.trim() === '') return;
    this.latest = text;
    if (this.timer || this.posting) return;
    const wait = this.ref ? Math.max(0, this.lastEditAt + this.intervalMs - this.now()) : 0;
    if (wait === 0 && (!this.ref || (this.ops.mayEdit?.() ?? true))) return void this.flush();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.update(this.latest);
    }, wait || this.intervalMs);
    this.timer.unref();
  }

  async finish(answer: FinalAnswer): Promise<AdoptedAnswer | undefined> {
    this.end();
    await this.work;
    const ref = this.ref;
    const first = answer.parts[0];
    if (!ref || first === undefined) {
      await this.withdraw();
      return undefined;
    }
    try {
      if (first !== this.shown) await this.ops.edit(ref, first);
      this.options.onShown?.(ref);
      this.ops.answered?.(ref);
      return { ref, parts: 1 };
    } catch (error) {
      this.ops.warn('the live answer could not become the answer; sending it anew', error);
      await this.withdraw();
      return undefined;
    }
  }

  async cancel(): Promise<void> {
    this.end();
    await this.work;
    await this.withdraw();
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    const display = this.ops.fit(this.latest);
    if (display === this.shown) return;
    this.posting = true;
    this.work = this.work
      .then(async () => {
        if (this.ended && this.ref) return;
        if (!this.ref) this.ref = await this.ops.post(display, this.options.onCreating?.(display));
        else await this.ops.edit(this.ref, display);
        this.shown = display;
        this.lastEditAt = this.now();
        this.options.onShown?.(this.ref);
      })
      .catch((error: unknown) => this.ops.warn('live answer update failed', error))
      .finally(() => {
        this.posting = false;
        // Text that arrived during the call is shown by the next edit.
        if (!this.ended && this.ops.fit(this.latest) !== this.shown) this.update(this.latest);
      });
  }

  /** Removes what this live answer put in the chat, so the answer the gateway sends is the only copy. */
  private async withdraw(): Promise<void> {
    const ref = this.ref;
    this.ref = undefined;
    if (!ref) return;
    await this.ops.remove(ref).catch((error: unknown) => this.ops.warn('could not remove a live answer message', error));
  }
}
