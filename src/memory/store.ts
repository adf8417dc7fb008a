import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { Db } from '../store/db.js';
import { buildFtsQuery, meaningfulWords } from './query.js';

export const MEMORY_SOURCES = ['tool', 'command', 'extracted', 'import'] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/** One thing hob remembers about one person. */
export type MemoryEntry = {
  id: string;
  personId: string;
  title?: string;
  content: string;
  tags: string[];
  source: MemorySource;
  createdAt: number;
  updatedAt: number;
  lastUsedAt?: number;
  useCount: number;
};

export type NewEntry = { content: string; title?: string; tags?: string[]; source: MemorySource };

/** An entry as export writes it and import reads it back (every field kept). */
export type StoredEntry = Omit<MemoryEntry, 'personId'>;

export type SaveResult = { entry: MemoryEntry; seq: number; updated: boolean };

type Row = {
  seq: number;
  id: string;
  person_id: string;
  title: string | null;
  content: string;
  tags: string;
  source: MemorySource;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  use_count: number;
};

/** Entries this alike in their meaningful words are one fact said again: the save updates it. */
const SAME_FACT_SIMILARITY = 0.8;
/** Full-text candidates ranked by bm25, before recency is blended in. */
const TEXT_CANDIDATES = 50;
/** About this many matching rows are ranked by bm25 (the costly part of a search). */
const RANK_BUDGET = 1000;
/** bm25 weights of title, content, tags and owner: the index's `rank` setting (its migration). */
const BM25_WEIGHTS = '2.0, 1.0, 1.5, 0.0';
/** Recency adds up to this much to a match's relevance, fading over about three months. */
const RECENCY_WEIGHT = 0.5;
const RECENCY_DAYS = 90;
/**
 * Uses found by searches are written this long after the search, in one transaction: the
 * write (and the WAL checkpoint it sometimes sets off, several ms) stays off the search.
 */
const USE_FLUSH_MS = 1000;
/** Past this many entries waiting, the search that adds more writes them at once. */
const MAX_PENDING_USES = 1000;

type PendingUse = { count: number; at: number };

/**
 * Long-term memory in SQLite: one set of entries per person, each mirrored in the FTS5
 * index (`porter unicode61`). Every method takes the person id and touches only that
 * person's rows: an id of someone else's entry is simply not found.
 */
export class MemoryStore {
  /** seq → uses not yet written; every read adds them in, so nobody sees the delay. */
  private readonly pendingUses = new Map<number, PendingUse>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Told when a delayed write of uses fails (it runs on a timer, so nothing else would hear). */
    private readonly onFlushError: (error: unknown) => void = () => undefined,
  ) {}

  /** Saves a fact; one already known (same words, or the same title) is updated instead. */
  save(personId: string, entry: NewEntry): SaveResult {
    const content = entry.content.trim();
    if (!content) throw new Error('There is nothing to save: the content is empty.');
    const tags = [...new Set((entry.tags ?? []).map((tag) => tag.trim()).filter(Boolean))];
    const title = entry.title?.trim() || undefined;
    const now = this.clock.now();
    return this.db.transaction((): SaveResult => {
      const known = this.sameFact(personId, content, title);
      if (known) {
        const mergedTags = [...new Set([...(JSON.parse(known.tags) as string[]), ...tags])];
        this.db
          .prepare('UPDATE memory_entries SET content = ?, content_key = ?, title = ?, tags = ?, updated_at = ?, embedded = 0 WHERE seq = ?')
          .run(content, contentKey(content), title ?? known.title, JSON.stringify(mergedTags), now, known.seq);
        this.reindex(known.seq);
        return { entry: this.bySeq(known.seq) as MemoryEntry, seq: known.seq, updated: true };
      }
      const seq = this.insert(personId, { id: newEntryId(), content, title, tags, source: entry.source, createdAt: now, updatedAt: now, useCount: 0 });
      return { entry: this.bySeq(seq) as MemoryEntry, seq, updated: false };
    })();
  }

  /** Puts back an exported entry as it was (same id, times and counts) when the id is free or already this person's. */
  restore(personId: string, entry: StoredEntry): { seq: number; id: string } {
    return this.db.transaction(() => {
      const existing = this.db.prepare('SELECT seq, person_id FROM memory_entries WHERE id = ?').get(entry.id) as { seq: number; person_id: string } | undefined;
      if (existing && existing.person_id === personId) {
        this.db.prepare('DELETE FROM memory_entries WHERE seq = ?').run(existing.seq);
        this.db.prepare('DELETE FROM memory_fts WHERE rowid = ?').run(existing.seq);
      }
      const id = existing && existing.person_id !== personId ? newEntryId() : entry.id;
      return { seq: this.insert(personId, { ...entry, id }), id };
    })();
  }

  get(personId: string, id: string): MemoryEntry | undefined {
    const row = this.db.prepare('SELECT * FROM memory_entries WHERE id = ? AND person_id = ?').get(id.trim(), personId) as Row | undefined;
    return row && this.toEntry(row);
  }

  seqOf(personId: string, id: string): number | undefined {
    const row = this.db.prepare('SELECT seq FROM memory_entries WHERE id = ? AND person_id = ?').get(id.trim(), personId) as { seq: number } | undefined;
    return row?.seq;
  }

  bySeq(seq: number): MemoryEntry | undefined {
    const row = this.db.prepare('SELECT * FROM memory_entries WHERE seq = ?').get(seq) as Row | undefined;
    return row && this.toEntry(row);
  }

  /** Newest first. */
  list(personId: string, options: { offset?: number; limit?: number } = {}): MemoryEntry[] {
    const rows = this.db
      .prepare('SELECT * FROM memory_entries WHERE person_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ? OFFSET ?')
      .all(personId, options.limit ?? -1, options.offset ?? 0) as Row[];
    return rows.map((row) => this.toEntry(row));
  }

  count(personId: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM memory_entries WHERE person_id = ?').get(personId) as { n: number }).n;
  }

  /** Deletes one of this person's entries, from the table and the index; false when it is not theirs or not there. */
  forget(personId: string, id: string): { seq: number } | undefined {
    const seq = this.seqOf(personId, id);
    if (seq === undefined) return undefined;
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM memory_entries WHERE seq = ?').run(seq);
      this.db.prepare('DELETE FROM memory_fts WHERE rowid = ?').run(seq);
    })();
    return { seq };
  }

  /** Deletes every entry of this person; returns their seqs (for the vector index). */
  forgetAll(personId: string): number[] {
    return this.db.transaction(() => {
      const seqs = (this.db.prepare('SELECT seq FROM memory_entries WHERE person_id = ?').all(personId) as { seq: number }[]).map((row) => row.seq);
      const dropIndexRow = this.db.prepare('DELETE FROM memory_fts WHERE rowid = ?');
      for (const seq of seqs) dropIndexRow.run(seq);
      this.db.prepare('DELETE FROM memory_entries WHERE person_id = ?').run(personId);
      return seqs;
    })();
  }

  /**
   * Full-text search: the question's meaningful words, any of them, ranked by bm25 and then
   * blended with recency. Returns entries with their seq, best first.
   */
  searchText(personId: string, question: string, limit: number): { seq: number; entry: MemoryEntry }[] {
    const terms = this.queryTerms(question);
    if (terms.length === 0) return [];
    // Rank the rows of the rarest words (they decide the order); a commoner word joins while
    // the rows to rank stay few, or while there are not yet enough rows for the answer.
    const byRarity = [...terms].sort((a, b) => a.rows - b.rows);
    const picked: typeof terms = [];
    let rows = 0;
    for (const term of byRarity) {
      if (picked.length > 0 && rows >= limit && rows + term.rows > RANK_BUDGET) break;
      picked.push(term);
      rows += term.rows;
    }
    return this.ranked(personId, picked.map((term) => term.expression).join(' OR '), limit);
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

  /**
   * The person's matches for an FTS5 expression: bm25 (title, content, tags weighted), then
   * recency blended into the best candidates. The first pass ranks the whole index and keeps
   * this person's rows (fast when they hold most of it, as in a personal hob); when that
   * leaves too few, the second pass ranks only the owner's postings.
   */
  private ranked(personId: string, terms: string, limit: number): { seq: number; entry: MemoryEntry }[] {
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
    const best = candidates
      .map((row) => {
        const lastUsedAt = Math.max(row.last_used_at ?? 0, this.pendingUses.get(row.seq)?.at ?? 0);
        const ageDays = (now - Math.max(row.updated_at, lastUsedAt)) / 86_400_000;
        const recency = Math.exp(-Math.max(0, ageDays) / RECENCY_DAYS);
        return { seq: row.seq, score: -row.rank * (1 + RECENCY_WEIGHT * recency) };
      })
      .sort((a, b) => b.score - a.score)
      .slice(0, limit);
    return best.flatMap(({ seq }) => {
      const entry = this.bySeq(seq);
      return entry ? [{ seq, entry }] : [];
    });
  }

  /** Moves every entry of one person to another (identities linked). */
  reassign(fromPersonId: string, toPersonId: string): void {
    const seqs = (this.db.prepare('SELECT seq FROM memory_entries WHERE person_id = ?').all(fromPersonId) as { seq: number }[]).map((row) => row.seq);
    // Vectors are partitioned by person: embedded again under the new owner.
    this.db.prepare('UPDATE memory_entries SET person_id = ?, embedded = 0 WHERE person_id = ?').run(toPersonId, fromPersonId);
    for (const seq of seqs) this.reindex(seq);
  }

  /**
   * Counts a use (found by a search, shown in a snapshot is not a use). Written a moment
   * later with the other uses waiting (see USE_FLUSH_MS); reads include it at once.
   */
  markUsed(seqs: number[]): void {
    if (seqs.length === 0) return;
    const now = this.clock.now();
    for (const seq of seqs) this.pendingUses.set(seq, { count: (this.pendingUses.get(seq)?.count ?? 0) + 1, at: now });
    if (this.pendingUses.size >= MAX_PENDING_USES) {
      this.flushUses();
      return;
    }
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      try {
        this.flushUses();
      } catch (error) {
        this.onFlushError(error);
      }
    }, USE_FLUSH_MS).unref();
  }

  /** Writes the uses waiting (on close, and before anything ordered by use in SQL). */
  flushUses(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pendingUses.size === 0 || !this.db.open) return;
    const uses = [...this.pendingUses];
    const touch = this.db.prepare('UPDATE memory_entries SET use_count = use_count + ?, last_used_at = max(coalesce(last_used_at, 0), ?) WHERE seq = ?');
    this.db.transaction(() => {
      for (const [seq, use] of uses) touch.run(use.count, use.at, seq);
    })();
    // Only once written: a failed write keeps them for the next try.
    for (const [seq, use] of uses) if (this.pendingUses.get(seq) === use) this.pendingUses.delete(seq);
  }

  /** The entries a snapshot draws from: the most used, then the most recent. */
  snapshotCandidates(personId: string, limit: number): { mostUsed: MemoryEntry[]; recent: MemoryEntry[] } {
    this.flushUses();
    const mostUsed = this.db
      .prepare('SELECT * FROM memory_entries WHERE person_id = ? AND use_count > 0 ORDER BY use_count DESC, last_used_at DESC LIMIT ?')
      .all(personId, limit) as Row[];
    const recent = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ?').all(personId, limit) as Row[];
    return { mostUsed: mostUsed.map((row) => this.toEntry(row)), recent: recent.map((row) => this.toEntry(row)) };
  }

  /** Entries still waiting for their vector, oldest first. */
  unembedded(limit: number): { seq: number; personId: string; text: string }[] {
    const rows = this.db.prepare('SELECT seq, person_id, title, content, tags FROM memory_entries WHERE embedded = 0 ORDER BY seq LIMIT ?').all(limit) as Row[];
    return rows.map((row) => ({ seq: row.seq, personId: row.person_id, text: embeddingText(row) }));
  }

  markEmbedded(seq: number): void {
    this.db.prepare('UPDATE memory_entries SET embedded = 1 WHERE seq = ?').run(seq);
  }

  /** A row as an entry, with the uses not yet written added in. */
  private toEntry(row: Row): MemoryEntry {
    const entry = toEntry(row);
    const pending = this.pendingUses.get(row.seq);
    return pending ? { ...entry, useCount: entry.useCount + pending.count, lastUsedAt: Math.max(entry.lastUsedAt ?? 0, pending.at) } : entry;
  }

  private insert(personId: string, entry: StoredEntry): number {
    const result = this.db
      .prepare(
        `INSERT INTO memory_entries (id, person_id, title, content, content_key, tags, source, created_at, updated_at, last_used_at, use_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(entry.id, personId, entry.title ?? null, entry.content, contentKey(entry.content), JSON.stringify(entry.tags), entry.source, entry.createdAt, entry.updatedAt, entry.lastUsedAt ?? null, entry.useCount);
    const seq = Number(result.lastInsertRowid);
    this.reindex(seq);
    return seq;
  }

  private reindex(seq: number): void {
    const row = this.db.prepare('SELECT person_id, title, content, tags FROM memory_entries WHERE seq = ?').get(seq) as Pick<Row, 'person_id' | 'title' | 'content' | 'tags'>;
    this.db.prepare('DELETE FROM memory_fts WHERE rowid = ?').run(seq);
    this.db
      .prepare('INSERT INTO memory_fts (rowid, title, content, tags, owner) VALUES (?, ?, ?, ?, ?)')
      .run(seq, row.title ?? '', row.content, (JSON.parse(row.tags) as string[]).join(' '), ownerToken(row.person_id));
  }

  private sameFact(personId: string, content: string, title: string | undefined): Row | undefined {
    const exact = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? AND content_key = ?').get(personId, contentKey(content)) as Row | undefined;
    if (exact) return exact;
    if (title) {
      const titled = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? AND title = ? COLLATE NOCASE').get(personId, title) as Row | undefined;
      if (titled) return titled;
    }
    const words = new Set(meaningfulWords(content));
    if (words.size < 3) return undefined;
    // A fact said again shares most words: its three longest must all be there (cheap to ask).
    const rarest = [...words].sort((a, b) => b.length - a.length).slice(0, 3);
    for (const { seq, entry } of this.ranked(personId, rarest.map((word) => `"${word}"`).join(' AND '), 5)) {
      if (similarity(words, new Set(meaningfulWords(entry.content))) >= SAME_FACT_SIMILARITY) return this.db.prepare('SELECT * FROM memory_entries WHERE seq = ?').get(seq) as Row;
    }
    return undefined;
  }
}

/** The person's token in the index: a hash, so no id can be mistaken for words. */
function ownerToken(personId: string): string {
  return `o${createHash('sha256').update(personId).digest('hex').slice(0, 20)}`;
}

/** What gets embedded for an entry: its title, content and tags. */
function embeddingText(row: Pick<Row, 'title' | 'content' | 'tags'>): string {
  const tags = JSON.parse(row.tags) as string[];
  return [row.title, row.content, tags.length ? `(${tags.join(', ')})` : ''].filter(Boolean).join('\n');
}

function toEntry(row: Row): MemoryEntry {
  return {
    id: row.id,
    personId: row.person_id,
    ...(row.title !== null ? { title: row.title } : {}),
    content: row.content,
    tags: JSON.parse(row.tags) as string[],
    source: row.source,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.last_used_at !== null ? { lastUsedAt: row.last_used_at } : {}),
    useCount: row.use_count,
  };
}

/** Content compared for "already known": case, spacing and punctuation do not matter. */
function contentKey(content: string): string {
  return (content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

function similarity(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** Short, unguessable ids: 8 characters from 32 (no 0/1/l/o to misread). */
function newEntryId(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  return [...randomBytes(8)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
