/**
 * Memory search on PostgreSQL, ranked as the SQLite store ranks (../memory/ranking.ts): the
 * question's meaningful words (stop words dropped), each matched as a word — stemmed, in
 * every language hob knows — or, when the person holds no such word, as a prefix ("Jon" →
 * "Jonas"); any word may match; the rows of the rarest words are ranked (about RANK_BUDGET
 * at most), by a bm25-like score (each word's ts_rank_cd weighted by its rarity among the
 * person's entries, title over tags over content), then blended with recency. Vectors are
 * ranked in hob over the person's real[] rows (a person's memory is small); the caller fuses
 * the two rankings by reciprocal rank as Memory.search does.
 *
 * The outputs are those of MemoryStore.searchText and VectorIndex.nearest, so this can sit
 * behind the Store port's memory repository.
 */
import { entryOf, type MemoryEntry, type MemorySource } from '../memory/entry.js';
import { MAX_TERMS, meaningfulWords, MIN_PREFIX_LENGTH } from '../memory/query.js';
import { rarestTerms, TEXT_CANDIDATES, withRecency } from '../memory/ranking.js';
import type { PostgresBridge } from './bridge.js';

/** Sign-bit candidates ranked exactly: all of a small memory, capped for a large one (as on SQLite). */
const BIT_CANDIDATES_MIN = 200;
const BIT_CANDIDATES_MAX = 1000;
/** ts_rank_cd weights {D, C, B, A}: content, tags, title as 1 : 1.5 : 2, SQLite's bm25 weights. */
const RANK_WEIGHTS = '{0, 0.5, 0.75, 1.0}';

export type TextHit = { seq: number; entry: MemoryEntry };

export type SearchOptions = {
  now: number;
  /** A use of the entry not yet written (the store batches them): counts for recency as if it were. */
  pendingUseAt?: (seq: number) => number | undefined;
};

type Term = { query: string; rows: number };

/** bm25's inverse document frequency: a word in few entries weighs more. A number in the SQL text, never text from outside. */
function rarity(term: Term, total: number): string {
  return Math.log(1 + (total - term.rows + 0.5) / (term.rows + 0.5)).toFixed(6);
}

/**
 * The person's entries that match the question's words, best first (at most `limit`), as
 * MemoryStore.searchText returns them.
 */
export function searchText(bridge: PostgresBridge, personId: string, question: string, limit: number, options: SearchOptions): TextHit[] {
  const words = meaningfulWords(question).slice(0, MAX_TERMS);
  if (words.length === 0) return [];
  const { terms, total } = termsOf(bridge, words);
  const picked = rarestTerms(terms.filter((term) => term.rows > 0), limit);
  if (picked.length === 0) return [];
  // Each word's rank weighted by its rarity (bm25's idf); the words come in as typed
  // parameters, so nothing is parsed per row.
  const score = picked.map((_, n) => `CASE WHEN e.search @@ $${n + 4}::tsquery THEN ${rarity(picked[n] as Term, total)} * ts_rank_cd('${RANK_WEIGHTS}', e.search, $${n + 4}::tsquery, 1) ELSE 0 END`).join(' + ');
  const candidates = bridge.query<EntryRow & { score: number }>(
    `WITH scored AS (
       SELECT e.seq, ${score} AS score FROM memory_entries e
       WHERE e.person_id = $1 AND e.search @@ $2::tsquery
       ORDER BY score DESC LIMIT $3)
     SELECT ${ENTRY_COLUMNS}, s.score FROM scored s JOIN memory_entries e ON e.seq = s.seq`,
    [personId, picked.map((term) => `(${term.query})`).join(' | '), Math.max(limit, TEXT_CANDIDATES), ...picked.map((term) => term.query)],
  ).rows;
  return candidates
    .map((row) => {
      const lastUsedAt = Math.max(row.last_used_at ?? 0, options.pendingUseAt?.(row.seq) ?? 0);
      return { row, score: withRecency(row.score, row.updated_at, lastUsedAt, options.now) };
    })
    .sort((a, b) => b.score - a.score || b.row.seq - a.row.seq)
    .slice(0, limit)
    .map(({ row }) => ({ seq: row.seq, entry: toEntry(row) }));
}

/**
 * Each word as the tsquery it is searched with and the rows it matches: the word (stemmed
 * in each language) when the index holds it, else its prefix when it is long enough. As on
 * SQLite, the counts are over the whole index (the GIN index answers them without reading
 * rows; a person's own count would read each row), and so is the total, the planner's
 * estimate. One round trip: counting is cheap next to ranking.
 */
function termsOf(bridge: PostgresBridge, words: string[]): { terms: Term[]; total: number } {
  const rows = bridge.query<{ whole: string; whole_rows: number; prefix: string | null; prefix_rows: number; total: number }>(
    `WITH words AS (SELECT hob_word_query(word) AS whole,
                           CASE WHEN length(word) >= $2 THEN to_tsquery('simple', word || ':*') END AS prefix, i
                    FROM unnest($1::text[]) WITH ORDINALITY AS w(word, i))
     SELECT w.whole::text AS whole, n.rows AS whole_rows, w.prefix::text AS prefix,
            CASE WHEN n.rows = 0 AND w.prefix IS NOT NULL
                 THEN (SELECT count(*)::int FROM memory_entries e WHERE e.search @@ w.prefix) ELSE 0 END AS prefix_rows,
            (SELECT greatest(reltuples, 0)::int FROM pg_class WHERE oid = 'memory_entries'::regclass) AS total
     FROM words w CROSS JOIN LATERAL (SELECT count(*)::int AS rows FROM memory_entries e WHERE e.search @@ w.whole) n
     ORDER BY w.i`,
    [words, MIN_PREFIX_LENGTH],
  ).rows;
  const terms = rows.map((row) => (row.whole_rows > 0 || row.prefix === null ? { query: row.whole, rows: row.whole_rows } : { query: row.prefix, rows: row.prefix_rows }));
  // The estimate lags behind fresh rows (and is 0 before the first ANALYZE).
  return { terms, total: Math.max(rows[0]?.total ?? 0, ...terms.map((term) => term.rows), 1) };
}

/**
 * The person's entries nearest to a vector by cosine distance, nearest first (as
 * VectorIndex.nearest returns them). The server picks candidates by the Hamming distance of
 * the vectors' signs; hob ranks those exactly. The vectors come over in PostgreSQL's binary
 * array form (array_send), far cheaper to read than real[]'s text.
 */
export function nearestVectors(bridge: PostgresBridge, personId: string, vector: Float32Array, k: number): number[] {
  const signs = Array.from(vector, (value) => (value > 0 ? '1' : '0')).join('');
  const candidates = Math.min(BIT_CANDIDATES_MAX, Math.max(BIT_CANDIDATES_MIN, k * 10));
  const rows = bridge.query<{ seq: number; raw: Uint8Array }>(
    // Only the candidates' floats are read (each is stored out of line): the scan reads signs only.
    `WITH near AS (SELECT seq FROM memory_vectors WHERE person_id = $1 AND bit_length(signs) = $2 ORDER BY bit_count(signs # $3::varbit) LIMIT $4)
     SELECT v.seq, array_send(v.embedding) AS raw FROM near JOIN memory_vectors v ON v.seq = near.seq`,
    [personId, vector.length, signs, candidates],
  ).rows;
  const norm = Math.hypot(...vector) || 1;
  return rows
    .map((row) => ({ seq: row.seq, distance: 1 - cosineWith(vector, norm, row.raw) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, k)
    .map((row) => row.seq);
}

/** Stores (or replaces) an entry's vector. */
export function putVector(bridge: PostgresBridge, seq: number, personId: string, vector: Float32Array): void {
  bridge.query('INSERT INTO memory_vectors (seq, person_id, embedding) VALUES ($1, $2, $3::real[]) ON CONFLICT (seq) DO UPDATE SET person_id = excluded.person_id, embedding = excluded.embedding', [
    seq,
    personId,
    Array.from(vector),
  ]);
}

/** Which vector ranking this database allows, for `hob doctor`: pgvector when the extension is installed in it. */
export function vectorSupport(bridge: PostgresBridge): 'pgvector' | 'arrays' {
  return bridge.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'").rowCount > 0 ? 'pgvector' : 'arrays';
}

/**
 * Cosine similarity of a vector and a one-dimensional float4 array in binary form: a 20-byte
 * header (dimensions, null flag, element type, length, lower bound), then each element as a
 * 4-byte length and a big-endian float.
 */
function cosineWith(vector: Float32Array, norm: number, raw: Uint8Array): number {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let dot = 0;
  let own = 0;
  for (let i = 0, offset = 20; i < vector.length; i++, offset += 8) {
    const value = view.getFloat32(offset + 4);
    dot += value * (vector[i] as number);
    own += value * value;
  }
  return dot / (norm * (Math.sqrt(own) || 1));
}

export const ENTRY_COLUMNS = 'e.seq, e.id, e.person_id, e.title, e.content, e.tags, e.source, e.created_at, e.updated_at, e.last_used_at, e.use_count';

export type EntryRow = {
  seq: number;
  id: string;
  person_id: string;
  title: string | null;
  content: string;
  tags: string[];
  source: MemorySource;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  use_count: number;
};

export function toEntry(row: EntryRow): MemoryEntry {
  return entryOf(row, row.tags);
}
