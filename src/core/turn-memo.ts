/**
 * Look-ups that cannot change within one turn of the event loop, made once per turn. One
 * message asks who its sender is and for their profile six and two times over (the stamp,
 * the stored row, the run, the system prompt and its memory part), all before the event
 * loop turns; this answers the repeats from memory and forgets everything when the turn
 * ends (setImmediate), so a change made by another process is seen by the next message as
 * before. A change made here calls `forget()` at once.
 */
export class TurnMemo {
  private readonly values = new Map<string, unknown>();

  /** The value for `key` already looked up in this turn, else `look()`'s (kept for the turn). */
  get<T>(key: string, look: () => T): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const value = look();
    if (this.values.size === 0) setImmediate(() => this.values.clear());
    this.values.set(key, value);
    return value;
  }

  /** Something these look-ups read has changed: the next ask looks again. */
  forget(): void {
    this.values.clear();
  }
}
