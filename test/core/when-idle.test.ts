import { describe, expect, it } from 'vitest';
import { whenIdle } from '../../src/core/when-idle.js';

/**
 * Background work after `hob start` (the sandbox's walk for secrets) waits until hob is idle,
 * so it never falls among the messages it is answering.
 */
describe('running work once the event loop is idle', () => {
  /** Keeps the event loop busy for `turns` turns of a few milliseconds each, then lets it rest. */
  function busyFor(turns: number, events: string[]): void {
    const spin = () => {
      const until = performance.now() + 5;
      while (performance.now() < until) {
        // busy, as answering a message is
      }
      if (--turns > 0) setImmediate(spin);
      else events.push('quiet');
    };
    spin();
  }

  it('does not run while the loop is busy, and runs once it is quiet', async () => {
    const events: string[] = [];
    busyFor(30, events);
    await new Promise<void>((resolve) =>
      whenIdle(() => {
        events.push('work');
        resolve();
      }, { windowMs: 20 }),
    );
    expect(events).toEqual(['quiet', 'work']);
  });

  it('runs nothing once cancelled', async () => {
    let ran = false;
    const cancel = whenIdle(() => (ran = true), { windowMs: 5 });
    cancel();
    // Several idle looks' worth, waited on a timer of the same kind.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ran).toBe(false);
  });
});
