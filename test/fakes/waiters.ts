/**
 * Waiters on a fake's state: `waitFor` resolves with the first truthy value of a probe,
 * re-checked on every `changed()` and every 10 ms.
 */
export class Waiters {
  private readonly listeners = new Set<() => void>();

  /**
   * @param timedOut the rejection's message after `timeoutMs` (the fake's name and its recent calls).
   */
  waitFor<T>(probe: () => T | undefined | null | false, timeoutMs: number, timedOut: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = (): void => {
        let value: T | undefined | null | false;
        try {
          value = probe();
        } catch (error) {
          finish();
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        if (value !== undefined && value !== null && value !== false) {
          finish();
          resolve(value);
        }
      };
      const finish = (): void => {
        clearInterval(interval);
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      // The interval catches state outside the fake (a handler's own bookkeeping).
      const interval = setInterval(check, 10);
      const timer = setTimeout(() => {
        finish();
        reject(new Error(timedOut()));
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  /** Tells every waiter to look again. */
  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
