/**
 * Long-term memory entries on PostgreSQL (the port: ../../memory/entries.ts): searched
 * through the generated tsvector (../memory-search.ts), vectors as real[] beside them.
 */
import type { Clock } from '../../../core/clock.js';
import { SAME_FACT_SIMILARITY, similarity, type MemoryEntryRepository } from '../../memory/entries.js';
import { contentKey, newEntryId, type MemoryEntry, type NewEntry, type SaveResult, type StoredEntry } from '../../memory/entry.js';
import { PendingUses } from '../../memory/pending-uses.js';
import { meaningfulWords } from '../../memory/query.js';
import type { VectorRepository } from '../../vectors.js';
import { ENTRY_COLUMNS, nearestVectors, putVector, searchText, toEntry, type EntryRow } from '../memory-search.js';
import type { Sql } from '../sql.js';

const ENTRY = `SELECT ${ENTRY_COLUMNS} FROM memory_entries e`;

export class PostgresMemoryEntries implements MemoryEntryRepository {
  private readonly uses: PendingUses;

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    onFlushError: (error: unknown) => void = () => undefined,
  ) {
    this.uses = new PendingUses(
      (uses) =>
        this.sql.run(
          `UPDATE memory_entries e SET use_count = e.use_count + u.count, last_used_at = greatest(coalesce(e.last_used_at, 0), u.at)
           FROM unnest(?::bigint[], ?::int[], ?::bigint[]) AS u(seq, count, at) WHERE e.seq = u.seq`,
          uses.map(([seq]) => seq), uses.map(([, use]) => use.count), uses.map(([, use]) => use.at),
        ),
      clock,
      onFlushError,
    );
  }

  save(personId: string, entry: NewEntry): SaveResult {
    const content = entry.content.trim();
    if (!content) throw new Error('There is nothing to save: the content is empty.');
    const tags = [...new Set((entry.tags ?? []).map((tag) => tag.trim()).filter(Boolean))];
    const title = entry.title?.trim() || undefined;
    const now = this.clock.now();
    return this.sql.transaction((): SaveResult => {
      const known = this.sameFact(personId, content, title);
      if (known) {
        this.sql.run(
          'UPDATE memory_entries SET content = ?, content_key = ?, title = ?, tags = ?::text[], updated_at = ?, embedded = false WHERE seq = ?',
          content, contentKey(content), title ?? known.title, [...new Set([...known.tags, ...tags])], now, known.seq,
        );
        this.sql.run('DELETE FROM memory_vectors WHERE seq = ?', known.seq);
        return { entry: this.bySeq(known.seq) as MemoryEntry, seq: known.seq, updated: true };
      }
      const seq = this.insert(personId, { id: newEntryId(), content, title, tags, source: entry.source, createdAt: now, updatedAt: now, useCount: 0 });
      return { entry: this.bySeq(seq) as MemoryEntry, seq, updated: false };
    });
  }

  restore(personId: string, entry: StoredEntry): { seq: number; id: string } {
    return this.sql.transaction(() => {
      const existing = this.sql.get<{ seq: number; person_id: string }>('SELECT seq, person_id FROM memory_entries WHERE id = ?', entry.id);
      if (existing && existing.person_id === personId) this.sql.run('DELETE FROM memory_entries WHERE seq = ?', existing.seq);
      const id = existing && existing.person_id !== personId ? newEntryId() : entry.id;
      return { seq: this.insert(personId, { ...entry, id }), id };
    });
  }

  get(personId: string, id: string): MemoryEntry | undefined {
    return this.entryOf(this.sql.get<EntryRow>(`${ENTRY} WHERE e.id = ? AND e.person_id = ?`, id.trim(), personId));
  }

  seqOf(personId: string, id: string): number | undefined {
    return this.sql.get<{ seq: number }>('SELECT seq FROM memory_entries WHERE id = ? AND person_id = ?', id.trim(), personId)?.seq;
  }

  bySeq(seq: number): MemoryEntry | undefined {
    return this.entryOf(this.sql.get<EntryRow>(`${ENTRY} WHERE e.seq = ?`, seq));
  }

  list(personId: string, options: { offset?: number; limit?: number } = {}): MemoryEntry[] {
    // LIMIT NULL is no limit.
    return this.sql.all<EntryRow>(`${ENTRY} WHERE e.person_id = ? ORDER BY e.updated_at DESC, e.seq DESC LIMIT ? OFFSET ?`, personId, options.limit ?? null, options.offset ?? 0).map((row) => this.withUses(row));
  }

  count(personId: string): number {
    return this.sql.get<{ n: number }>('SELECT count(*) AS n FROM memory_entries WHERE person_id = ?', personId)?.n ?? 0;
  }

  forget(personId: string, id: string): { seq: number } | undefined {
    // Its vector goes with it (ON DELETE CASCADE).
    const row = this.sql.get<{ seq: number }>('DELETE FROM memory_entries WHERE id = ? AND person_id = ? RETURNING seq', id.trim(), personId);
    return row && { seq: row.seq };
  }

  forgetAll(personId: string): number[] {
    return this.sql.all<{ seq: number }>('DELETE FROM memory_entries WHERE person_id = ? RETURNING seq', personId).map((row) => row.seq).sort((a, b) => a - b);
  }

  searchText(personId: string, question: string, limit: number): { seq: number; entry: MemoryEntry }[] {
    return searchText(this.sql.bridge, personId, question, limit, { now: this.clock.now(), pendingUseAt: (seq) => this.uses.lastUseAt(seq) }).map((hit) => ({ seq: hit.seq, entry: this.uses.addedTo(hit.seq, hit.entry) }));
  }

  reassign(fromPersonId: string, toPersonId: string): void {
    // Vectors are searched per person: embedded again under the new owner.
    this.sql.run('DELETE FROM memory_vectors WHERE person_id = ?', fromPersonId);
    this.sql.run('UPDATE memory_entries SET person_id = ?, embedded = false WHERE person_id = ?', toPersonId, fromPersonId);
  }

  markUsed(seqs: number[]): void {
    this.uses.mark(seqs);
  }

  flushUses(): void {
    this.uses.flush();
  }

  snapshotCandidates(personId: string, limit: number): { mostUsed: MemoryEntry[]; recent: MemoryEntry[] } {
    this.uses.flush();
    const mostUsed = this.sql.all<EntryRow>(`${ENTRY} WHERE e.person_id = ? AND e.use_count > 0 ORDER BY e.use_count DESC, e.last_used_at DESC LIMIT ?`, personId, limit);
    const recent = this.sql.all<EntryRow>(`${ENTRY} WHERE e.person_id = ? ORDER BY e.updated_at DESC, e.seq DESC LIMIT ?`, personId, limit);
    return { mostUsed: mostUsed.map((row) => this.withUses(row)), recent: recent.map((row) => this.withUses(row)) };
  }

  unembedded(limit: number): { seq: number; personId: string; text: string }[] {
    return this.sql.all<EntryRow>(`${ENTRY} WHERE NOT e.embedded ORDER BY e.seq LIMIT ?`, limit).map((row) => ({
      seq: row.seq,
      personId: row.person_id,
      text: [row.title, row.content, row.tags.length ? `(${row.tags.join(', ')})` : ''].filter(Boolean).join('\n'),
    }));
  }

  markEmbedded(seq: number): void {
    this.sql.run('UPDATE memory_entries SET embedded = true WHERE seq = ?', seq);
  }

  private withUses(row: EntryRow): MemoryEntry {
    return this.uses.addedTo(row.seq, toEntry(row));
  }

  private entryOf(row: EntryRow | undefined): MemoryEntry | undefined {
    return row && this.withUses(row);
  }

  private insert(personId: string, entry: StoredEntry): number {
    return this.sql.get<{ seq: number }>(
      `INSERT INTO memory_entries (id, person_id, title, content, content_key, tags, source, created_at, updated_at, last_used_at, use_count)
       VALUES (?, ?, ?, ?, ?, ?::text[], ?, ?, ?, ?, ?) RETURNING seq`,
      entry.id, personId, entry.title ?? null, entry.content, contentKey(entry.content), entry.tags, entry.source, entry.createdAt, entry.updatedAt, entry.lastUsedAt ?? null, entry.useCount,
    )!.seq;
  }

  /** The entry this content says again: the same words, the same title, or most of the same meaningful words. */
  private sameFact(personId: string, content: string, title: string | undefined): EntryRow | undefined {
    const exact = this.sql.get<EntryRow>(`${ENTRY} WHERE e.person_id = ? AND e.content_key = ?`, personId, contentKey(content));
    if (exact) return exact;
    if (title) {
      const titled = this.sql.get<EntryRow>(`${ENTRY} WHERE e.person_id = ? AND lower(e.title) = lower(?)`, personId, title);
      if (titled) return titled;
    }
    const words = new Set(meaningfulWords(content));
    if (words.size < 3) return undefined;
    // A fact said again shares most words: its three longest must all be there (cheap to ask).
    const rarest = [...words].sort((a, b) => b.length - a.length).slice(0, 3);
    const candidates = this.sql.all<EntryRow>(
      `${ENTRY} WHERE e.person_id = ? AND e.search @@ (hob_word_query(?) && hob_word_query(?) && hob_word_query(?)) ORDER BY e.updated_at DESC LIMIT 5`,
      personId, ...rarest,
    );
    return candidates.find((row) => similarity(words, new Set(meaningfulWords(row.content))) >= SAME_FACT_SIMILARITY);
  }
}

/** Vectors as real[] beside their entries, ranked in hob per person (../memory-search.ts). */
export class PostgresVectors implements VectorRepository {
  constructor(private readonly sql: Sql) {}

  put(seq: number, personId: string, vector: Float32Array): void {
    putVector(this.sql.bridge, seq, personId, vector);
  }

  delete(seqs: number[]): void {
    if (seqs.length) this.sql.run('DELETE FROM memory_vectors WHERE seq = ANY(?::bigint[])', seqs);
  }

  nearest(personId: string, vector: Float32Array, k: number): number[] {
    return nearestVectors(this.sql.bridge, personId, vector, k);
  }
}
