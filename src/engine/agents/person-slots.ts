/**
 * A limit per person on work running at once (workers): `acquire` resolves with a release
 * function when a slot is free, in the order asked, or with undefined when the signal aborts
 * first. People never wait on each other.
 */
export class PersonSlots {
  private readonly held = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async acquire(personId: string, signal: AbortSignal): Promise<(() => void) | undefined> {
    const entry = this.held.get(personId) ?? { running: 0, waiting: [] };
    this.held.set(personId, entry);
    if (entry.running >= this.limit) {
      const granted = await new Promise<boolean>((resolve) => {
        const onAbort = () => {
          entry.waiting = entry.waiting.filter((waiter) => waiter !== grant);
          resolve(false);
        };
        const grant = () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        };
        if (signal.aborted) return resolve(false);
        signal.addEventListener('abort', onAbort, { once: true });
        entry.waiting.push(grant);
      });
      if (!granted) {
        this.forgetIfIdle(personId, entry);
        return undefined;
      }
    } else {
      entry.running += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = entry.waiting.shift();
      // The slot passes straight to the next in line; `running` stays as it is.
      if (next) next();
      else {
        entry.running -= 1;
        this.forgetIfIdle(personId, entry);
      }
    };
  }

  /** How many of this person's are running now. */
  running(personId: string): number {
    return this.held.get(personId)?.running ?? 0;
  }

  private forgetIfIdle(personId: string, entry: { running: number; waiting: unknown[] }): void {
    if (entry.running === 0 && entry.waiting.length === 0) this.held.delete(personId);
  }
}
