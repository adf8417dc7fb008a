/**
 * Memory's full-text search on SQLite: FTS5 (`porter unicode61`) over title, content and tags,
 * one index for everyone with each row tagged by its owner's token. Ranked as ranking.ts says:
 * the question's rarest words, bm25 with the index's weights, then recency.
 */
import type { Clock } from '../../../core/clock.js';
import { ownerToken } from '../../memory/entry.js';
import { buildFtsQuery } from '../../memory/query.js';
import { rarestTerms, TEXT_CANDIDATES, withRecency } from '../../memory/ranking.js';
import type { Db } from '../db.js';

/** bm25 weights of title, content, tags and owner: the index's `rank` setting (its migration). */
const BM25_WEIGHTS = '2.0, 1.0, 1.5, 0.0';

export class MemoryTextSearch {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** A use of the entry not yet written (the store batches them): counts for recency as if it were. */
    private readonly pendingUseAt: (seq: number) => number | undefined,
  ) {}

  /**
   * The question's meaningful words, any of them, ranked by bm25 and then blended with
   * recency. Returns the entries' seqs, best first.
   */
  search(personId: string, question: string, limit: number): number[] {
    const terms = this.queryTerms(question);
    if (terms.length === 0) return [];
    return this.ranked(personId, rarestTerms(terms, limit).map((term) => term.expression).join(' OR '), limit);
  }

  /**
   * The person's matches for an FTS5 expression: bm25 (title, content, tags weighted), then
   * recency blended into the best candidates. The first pass ranks the whole index and keeps
   * this person's rows (fast when they hold most of it, as in a personal hob); when that
   * leaves too few, the second pass ranks only the owner's postings.
   */
  ranked(personId: string, terms: string, limit: number): number[] {
    const wanted = Math.max(limit, TEXT_CANDIDATES);
    // The LIMIT inside keeps the join to the best-ranked rows only; CROSS JOIN keeps that order.
    // bm25() with the index's rank weights (migration 'rank' setting) rather than the `rank`
    // column: the same scores, but SQLite keeps only the best LIMIT rows as it goes instead of
    // FTS5 sorting every match (about a quarter faster for a common word's 3,000 rows).
    const query = `SELECT e.seq, e.updated_at, e.last_used_at, r.rank FROM (SELECT rowid, bm25(memory_fts, ${BM25_WEIGHTS}) AS rank FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rank LIMIT ?) AS r
      CROSS JOIN memory_entries e ON e.seq = r.rowid WHERE e.person_id = ?`;
    type Candidate = { seq: number; updated_at: number; last_used_at: number | null; rank: number };
    let candidates = this.db.prepare(query).all(terms, wanted * 4, personId) as Candidate[];
    if (candidates.length < wanted) candidates = this.db.prepare(query).all(`owner : "${ownerToken(personId)}" AND (${terms})`, wanted, personId) as Candidate[];
    const now = this.clock.now();
    return candidates
      .map((row) => {
        const lastUsedAt = Math.max(row.last_used_at ?? 0, this.pendingUseAt(row.seq) ?? 0);
        return { seq: row.seq, score: withRecency(-row.rank, row.updated_at, lastUsedAt, now) };
      })
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((row) => row.seq);
  }

  /**
   * The question's meaningful words as FTS5 terms, each with how many rows it matches (the
   * count is cheap; ranking is not). A word the index holds as it is matches as a word
   * (stemmed); one it does not becomes a prefix ("Jon" → "Jonas").
   */
  private queryTerms(question: string): { expression: string; rows: number }[] {
    const count = (expression: string) => (this.db.prepare('SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH ?').get(expression) as { n: number }).n;
    const wholeWordRows = new Map<string, number>();
    const query = buildFtsQuery(question, (word) => {
      const rows = count(`"${word}"`);
      wholeWordRows.set(word, rows);
      return rows > 0;
    });
    if (!query) return [];
    return query.split(' OR ').map((expression) => {
      const word = expression.replace(/^"|"\*?$/g, '');
      const known = wholeWordRows.get(word);
      return { expression, rows: expression.endsWith('*') || known === undefined ? count(expression) : known };
    });
  }
}
