import { describe, expect, it } from 'vitest';
import { keepHeapSteady } from '../../src/core/steady-heap.js';

/**
 * `hob start` bounds how far V8 lets the old generation grow between full collections (the
 * figures are in the README's Benchmarks); a person who tunes it themselves keeps theirs.
 */
describe('keeping the heap steady under hob start', () => {
  it('sets the bound when the person set none', () => {
    expect(keepHeapSteady([], '')).toBe(true);
    expect(keepHeapSteady(['--max-old-space-size=2048'], '--enable-source-maps')).toBe(true);
  });

  it("leaves a person's own --heap-growing-percent alone, given to node or in NODE_OPTIONS", () => {
    expect(keepHeapSteady(['--heap-growing-percent=80'], '')).toBe(false);
    expect(keepHeapSteady([], '--enable-source-maps --heap_growing_percent=80')).toBe(false);
  });
});
