/**
 * A write that waits a moment so later ones can join it (in one transaction): the first
 * `schedule()` sets one timer, which does not keep the process alive; the ones after it until
 * it fires change nothing. The owner's own flush calls `cancel()`. A failure on the timer goes
 * to `onError`: nothing else would hear of it.
 */
export class DelayedWrite {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly write: () => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      try {
        this.write();
      } catch (error) {
        this.onError(error);
      }
    }, this.delayMs).unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
