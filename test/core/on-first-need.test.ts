import { describe, expect, it } from 'vitest';
import { OnFirstNeed } from '../../src/core/on-first-need.js';

/**
 * What hob loads on first need (the Markdown renderers, the speech lexer): loaded once for all
 * who ask at the same time, tried again after a failure instead of failing every later text,
 * and a use before the load says what was used too early.
 */
describe('something loaded on first need', () => {
  it('is loaded once for callers at the same time, and then given synchronously', async () => {
    let loads = 0;
    const part = new OnFirstNeed('the part', async () => ({ loads: ++loads }));
    expect(() => part.loaded()).toThrow('the part was used before it was loaded');
    const [a, b] = await Promise.all([part.load(), part.load()]);
    expect(a).toBe(b);
    expect(part.loaded()).toEqual({ loads: 1 });
    await part.load();
    expect(loads).toBe(1);
  });

  it('is tried again by the next caller after a load failed', async () => {
    let tries = 0;
    const part = new OnFirstNeed('the part', async () => {
      tries += 1;
      if (tries === 1) throw new Error('chunk missing');
      return 'ready';
    });
    await expect(part.load()).rejects.toThrow('chunk missing');
    expect(part.isLoaded).toBe(false);
    await expect(part.load()).resolves.toBe('ready');
    expect(part.loaded()).toBe('ready');
  });
});
