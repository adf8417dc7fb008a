/**
 * How a memory search ranks, the same on SQLite (text-search.ts) and PostgreSQL
 * (../postgres/memory-search.ts): the rows of the question's rarest words are ranked by a
 * bm25-like score, then blended with recency.
 */

/** Full-text candidates ranked by relevance, before recency is blended in. */
export const TEXT_CANDIDATES = 50;
/** About this many matching rows are ranked (the costly part of a search). */
export const RANK_BUDGET = 1000;
/** Recency adds up to this much to a match's relevance, fading over about three months. */
const RECENCY_WEIGHT = 0.5;
const RECENCY_DAYS = 90;

/**
 * The words whose rows get ranked: the rarest first (they decide the order); a commoner word
 * joins while the rows to rank stay few, or while there are not yet enough rows for the answer.
 */
export function rarestTerms<T extends { rows: number }>(terms: T[], limit: number): T[] {
  const picked: T[] = [];
  let rows = 0;
  for (const term of [...terms].sort((a, b) => a.rows - b.rows)) {
    if (picked.length > 0 && rows >= limit && rows + term.rows > RANK_BUDGET) break;
    picked.push(term);
    rows += term.rows;
  }
  return picked;
}

/** A match's relevance with recency blended in: the later of its last change and last use counts. */
export function withRecency(relevance: number, updatedAt: number, lastUsedAt: number, now: number): number {
  const ageDays = (now - Math.max(updatedAt, lastUsedAt)) / 86_400_000;
  const recency = Math.exp(-Math.max(0, ageDays) / RECENCY_DAYS);
  return relevance * (1 + RECENCY_WEIGHT * recency);
}
