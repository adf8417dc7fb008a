/**
 * The store contract suite's harness: each contract file registers its tests for a store
 * factory, and each store's runner (sqlite.test.ts, postgres.test.ts) hands in its own. A
 * test gets a fresh, empty store and a clock it moves itself.
 */
import { afterEach } from 'vitest';
import type { Store } from '../../../src/store/store.js';

export type ContractClock = { now(): number; set(ms: number): void; advance(ms: number): void };

/** Opens a fresh, empty store of one kind (each call a new file or database). */
export type StoreFactory = { kind: string; open(clock: ContractClock): Store | Promise<Store> };

export function contractClock(start = Date.parse('2026-12-01T10:00:00Z')): ContractClock {
  let now = start;
  return { now: () => now, set: (ms) => (now = ms), advance: (ms) => (now += ms) };
}

/** A store per test, closed after it. */
export function useStore(factory: StoreFactory): () => Promise<{ store: Store; clock: ContractClock }> {
  const opened: Store[] = [];
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
  });
  return async () => {
    const clock = contractClock();
    const store = await factory.open(clock);
    opened.push(store);
    return { store, clock };
  };
}
