import { describe, expect, it } from 'vitest';
import { holdWasmTierUp, keepHeapSteady } from '../../src/core/steady-heap.js';

/**
 * `hob start` bounds how far V8 lets the old generation grow between full collections, and
 * keeps the chat libraries' HTTP parser (WebAssembly) off V8's optimizing compiler (the
 * figures are in the README's Benchmarks); a person who tunes either themselves keeps theirs.
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

  it("raises WebAssembly's tiering budget when the person tuned none of its tiers", () => {
    expect(holdWasmTierUp([], '')).toBe(true);
    expect(holdWasmTierUp(['--heap-growing-percent=80'], '--enable-source-maps')).toBe(true);
  });

  it("leaves a person's own WebAssembly tiering alone, given to node or in NODE_OPTIONS", () => {
    expect(holdWasmTierUp(['--wasm-tiering-budget=1000'], '')).toBe(false);
    expect(holdWasmTierUp([], '--enable-source-maps --no-wasm-tier-up')).toBe(false);
    expect(holdWasmTierUp(['--liftoff-only'], '')).toBe(false);
    expect(holdWasmTierUp([], '--wasm_dynamic_tiering')).toBe(false);
  });
});
