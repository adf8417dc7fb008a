/**
 * A write that waits a moment so later ones can join it (in one transaction): the first
 * `schedule()` sets one timer, which does not keep the process alive; the ones after it until
 * it fires change nothing. A delay of 0 waits only for the rest of this turn of the event loop
 * (setImmediate): what else arrived in the same turn joins it. The owner's own flush calls
 * `cancel()`. A failure on the timer goes to `onError`: nothing else would hear of it.
 */
export class DelayedWrite {
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly write: () => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  schedule(): void {
    if (this.timer || this.immediate) return;
    if (this.delayMs === 0) this.immediate = setImmediate(() => this.fire()).unref();
    else this.timer = setTimeout(() => this.fire(), this.delayMs).unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private fire(): void {
    this.timer = undefined;
    this.immediate = undefined;
    try {
      this.write();
    } catch (error) {
      this.onError(error);
    }
  }
}
