/**
 * Memory's vectors in the Store port: one embedding per entry, searched only within one
 * person's entries. Each store says how it keeps them (`VectorSupport`, shown by `hob doctor`).
 */

export interface VectorRepository {
  /** Stores (or replaces) an entry's vector. */
  put(seq: number, personId: string, vector: Float32Array): void;
  delete(seqs: number[]): void;
  /** The nearest of this person's entries by cosine distance, nearest first. */
  nearest(personId: string, vector: Float32Array, k: number): number[];
}

/** How a store keeps vectors, in words for `hob doctor`; `none` says why it cannot. */
export type VectorSupport = { mode: 'sqlite-vec' | 'pgvector' | 'arrays'; description: string } | { mode: 'none'; problem: string };
