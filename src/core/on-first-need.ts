/**
 * Something loaded on first need instead of when hob starts (a library whose top level costs
 * milliseconds of every start, for work most starts never do): `load()` brings it in once,
 * callers at the same time share that load, and one that failed is tried again by the next
 * caller; `loaded()` then gives it synchronously, to code that awaited `load()` first (a
 * renderer called from a send), and says so plainly to code that did not.
 */
export class OnFirstNeed<T> {
  private value: T | undefined;
  private loading: Promise<T> | undefined;

  /** `what`: named in the error of a `loaded()` that came too early. */
  constructor(
    private readonly what: string,
    private readonly bring: () => Promise<T>,
  ) {}

  get isLoaded(): boolean {
    return this.value !== undefined;
  }

  load(): Promise<T> {
    return (this.loading ??= this.bring().then(
      (value) => (this.value = value),
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    ));
  }

  loaded(): T {
    if (this.value === undefined) throw new Error(`${this.what} was used before it was loaded (await its load() first)`);
    return this.value;
  }
}
