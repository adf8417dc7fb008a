/**
 * Long-term memory entries in the Store port: save, restore, list, forget, search. Every
 * method takes the person id and touches only that person's rows: an id of someone else's
 * entry is simply not found. Searches count uses, written a moment later in batches
 * (pending-uses.ts); every read includes them at once.
 */
import type { MemoryEntry, NewEntry, SaveResult, StoredEntry } from './entry.js';

export interface MemoryEntryRepository {
  /** Saves a fact; one already known (same words, or the same title) is updated instead. */
  save(personId: string, entry: NewEntry): SaveResult;
  /** Puts back an exported entry as it was (same id, times and counts) when the id is free or already this person's. */
  restore(personId: string, entry: StoredEntry): { seq: number; id: string };
  get(personId: string, id: string): MemoryEntry | undefined;
  seqOf(personId: string, id: string): number | undefined;
  bySeq(seq: number): MemoryEntry | undefined;
  /** Newest first. */
  list(personId: string, options?: { offset?: number; limit?: number }): MemoryEntry[];
  count(personId: string): number;
  /** Deletes one of this person's entries, from the table and the index; undefined when it is not theirs or not there. */
  forget(personId: string, id: string): { seq: number } | undefined;
  /** Deletes every entry of this person; returns their seqs (for the vector index). */
  forgetAll(personId: string): number[];
  /**
   * Full-text search: the question's meaningful words, any of them, ranked by bm25 and then
   * blended with recency (text-search.ts). Returns entries with their seq, best first.
   */
  searchText(personId: string, question: string, limit: number): { seq: number; entry: MemoryEntry }[];
  /** Moves every entry of one person to another (identities linked). */
  reassign(fromPersonId: string, toPersonId: string): void;
  /**
   * Counts a use (found by a search, shown in a snapshot is not a use). Written a moment
   * later with the other uses waiting (pending-uses.ts); reads include it at once.
   */
  markUsed(seqs: number[]): void;
  /** Writes the uses waiting (on close, and before anything ordered by use in SQL). */
  flushUses(): void;
  /** The entries a snapshot draws from: the most used, then the most recent. */
  snapshotCandidates(personId: string, limit: number): { mostUsed: MemoryEntry[]; recent: MemoryEntry[] };
  /** Entries still waiting for their vector, oldest first. */
  unembedded(limit: number): { seq: number; personId: string; text: string }[];
  markEmbedded(seq: number): void;
}

/** Entries this alike in their meaningful words are one fact said again: a save updates it. */
export const SAME_FACT_SIMILARITY = 0.8;

/** How alike two sets of words are (Jaccard): shared words over all words. */
export function similarity(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}
