/** Small async helpers shared by the loop and the gateway. */

/** An unbounded push queue that can be read with `for await`. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiters: ((result: IteratorResult<T>) => void)[] = [];
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: item, done: false });
    else this.items.push(item);
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) waiter({ value: undefined, done: true });
    this.waiters = [];
  }

  get size(): number {
    return this.items.length;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (true) {
      if (this.items.length > 0) {
        yield this.items.shift() as T;
        continue;
      }
      if (this.closed) return;
      const next = await new Promise<IteratorResult<T>>((resolve) => this.waiters.push(resolve));
      if (next.done) return;
      yield next.value;
    }
  }
}

/**
 * Runs generators concurrently, yielding their events as they arrive, and returns their
 * return values in the order the generators were given.
 */
export async function* mergeGenerators<E, R>(generators: AsyncGenerator<E, R>[]): AsyncGenerator<E, R[]> {
  const results: R[] = new Array<R>(generators.length);
  const pending = new Map<number, Promise<{ index: number; step: IteratorResult<E, R> }>>();
  const advance = (index: number) => {
    const generator = generators[index] as AsyncGenerator<E, R>;
    pending.set(index, generator.next().then((step) => ({ index, step })));
  };
  generators.forEach((_, index) => advance(index));
  while (pending.size > 0) {
    const { index, step } = await Promise.race(pending.values());
    if (step.done) {
      pending.delete(index);
      results[index] = step.value;
    } else {
      yield step.value;
      advance(index);
    }
  }
  return results;
}
