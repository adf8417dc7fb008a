/**
 * Long-term memory entries on SQLite (the port: ../../memory/entries.ts). Its parts: the
 * entry and its row (../../memory/entry.ts), full-text ranking (text-search.ts), use counts
 * written in batches (../../memory/pending-uses.ts).
 */
import type { Clock } from '../../../core/clock.js';
import { SAME_FACT_SIMILARITY, similarity, type MemoryEntryRepository } from '../../memory/entries.js';
import { contentKey, embeddingText, newEntryId, ownerToken, toEntry, type EntryRow, type MemoryEntry, type NewEntry, type SaveResult, type StoredEntry } from '../../memory/entry.js';
import { PendingUses } from '../../memory/pending-uses.js';
import { meaningfulWords } from '../../memory/query.js';
import type { Db } from '../db.js';
import { MemoryTextSearch } from './text-search.js';

/**
 * One set of entries per person, each mirrored in the FTS5 index (`porter unicode61`) with
 * its owner's token.
 */
export class SqliteMemoryEntries implements MemoryEntryRepository {
  private readonly uses: PendingUses;
  private readonly text: MemoryTextSearch;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Told when a delayed write of uses fails (it runs on a timer, so nothing else would hear). */
    onFlushError: (error: unknown) => void = () => undefined,
  ) {
    this.uses = new PendingUses(
      (uses) => {
        if (!db.open) return;
        const touch = db.prepare('UPDATE memory_entries SET use_count = use_count + ?, last_used_at = max(coalesce(last_used_at, 0), ?) WHERE seq = ?');
        db.transaction(() => {
          for (const [seq, use] of uses) touch.run(use.count, use.at, seq);
        })();
      },
      clock,
      onFlushError,
    );
    this.text = new MemoryTextSearch(db, clock, (seq) => this.uses.lastUseAt(seq));
  }

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
    const row = this.db.prepare('SELECT * FROM memory_entries WHERE id = ? AND person_id = ?').get(id.trim(), personId) as EntryRow | undefined;
    return row && this.toEntry(row);
  }

  seqOf(personId: string, id: string): number | undefined {
    const row = this.db.prepare('SELECT seq FROM memory_entries WHERE id = ? AND person_id = ?').get(id.trim(), personId) as { seq: number } | undefined;
    return row?.seq;
  }

  bySeq(seq: number): MemoryEntry | undefined {
    const row = this.db.prepare('SELECT * FROM memory_entries WHERE seq = ?').get(seq) as EntryRow | undefined;
    return row && this.toEntry(row);
  }

  /** Newest first. */
  list(personId: string, options: { offset?: number; limit?: number } = {}): MemoryEntry[] {
    const rows = this.db
      .prepare('SELECT * FROM memory_entries WHERE person_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ? OFFSET ?')
      .all(personId, options.limit ?? -1, options.offset ?? 0) as EntryRow[];
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
   * blended with recency (text-search.ts). Returns entries with their seq, best first.
   */
  searchText(personId: string, question: string, limit: number): { seq: number; entry: MemoryEntry }[] {
    return this.withEntries(this.text.search(personId, question, limit));
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
   * later with the other uses waiting (pending-uses.ts); reads include it at once.
   */
  markUsed(seqs: number[]): void {
    this.uses.mark(seqs);
  }

  /** Writes the uses waiting (on close, and before anything ordered by use in SQL). */
  flushUses(): void {
    this.uses.flush();
  }

  /** The entries a snapshot draws from: the most used, then the most recent. */
  snapshotCandidates(personId: string, limit: number): { mostUsed: MemoryEntry[]; recent: MemoryEntry[] } {
    this.uses.flush();
    const recent = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ?').all(personId, limit) as EntryRow[];
    // Fewer than `limit`: these are all the person's entries, so the most used are among them
    // (a new person, with none, costs one look-up where it cost two).
    const mostUsed =
      recent.length < limit
        ? mostUsedOf(recent, limit)
        : (this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? AND use_count > 0 ORDER BY use_count DESC, last_used_at DESC LIMIT ?').all(personId, limit) as EntryRow[]);
    return { mostUsed: mostUsed.map((row) => this.toEntry(row)), recent: recent.map((row) => this.toEntry(row)) };
  }

  /** Entries still waiting for their vector, oldest first. */
  unembedded(limit: number): { seq: number; personId: string; text: string }[] {
    const rows = this.db.prepare('SELECT seq, person_id, title, content, tags FROM memory_entries WHERE embedded = 0 ORDER BY seq LIMIT ?').all(limit) as EntryRow[];
    return rows.map((row) => ({ seq: row.seq, personId: row.person_id, text: embeddingText(row) }));
  }

  markEmbedded(seq: number): void {
    this.db.prepare('UPDATE memory_entries SET embedded = 1 WHERE seq = ?').run(seq);
  }

  /** A row as an entry, with the uses not yet written added in. */
  private toEntry(row: EntryRow): MemoryEntry {
    return this.uses.addedTo(row.seq, toEntry(row));
  }

  private withEntries(seqs: number[]): { seq: number; entry: MemoryEntry }[] {
    return seqs.flatMap((seq) => {
      const entry = this.bySeq(seq);
      return entry ? [{ seq, entry }] : [];
    });
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
    const row = this.db.prepare('SELECT person_id, title, content, tags FROM memory_entries WHERE seq = ?').get(seq) as Pick<EntryRow, 'person_id' | 'title' | 'content' | 'tags'>;
    this.db.prepare('DELETE FROM memory_fts WHERE rowid = ?').run(seq);
    this.db
      .prepare('INSERT INTO memory_fts (rowid, title, content, tags, owner) VALUES (?, ?, ?, ?, ?)')
      .run(seq, row.title ?? '', row.content, (JSON.parse(row.tags) as string[]).join(' '), ownerToken(row.person_id));
  }

  private sameFact(personId: string, content: string, title: string | undefined): EntryRow | undefined {
    const exact = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? AND content_key = ?').get(personId, contentKey(content)) as EntryRow | undefined;
    if (exact) return exact;
    if (title) {
      const titled = this.db.prepare('SELECT * FROM memory_entries WHERE person_id = ? AND title = ? COLLATE NOCASE').get(personId, title) as EntryRow | undefined;
      if (titled) return titled;
    }
    const words = new Set(meaningfulWords(content));
    if (words.size < 3) return undefined;
    // A fact said again shares most words: its three longest must all be there (cheap to ask).
    const rarest = [...words].sort((a, b) => b.length - a.length).slice(0, 3);
    for (const { seq, entry } of this.withEntries(this.text.ranked(personId, rarest.map((word) => `"${word}"`).join(' AND '), 5))) {
      if (similarity(words, new Set(meaningfulWords(entry.content))) >= SAME_FACT_SIMILARITY) return this.db.prepare('SELECT * FROM memory_entries WHERE seq = ?').get(seq) as EntryRow;
    }
    return undefined;
  }
}

/** The used rows in the order of the index `memory_person_used` (use_count, then last use, both descending, NULL last; then seq). */
function mostUsedOf(rows: EntryRow[], limit: number): EntryRow[] {
  const lastUse = (row: EntryRow) => row.last_used_at ?? -Infinity;
  return rows
    .filter((row) => row.use_count > 0)
    .sort((a, b) => b.use_count - a.use_count || lastUse(b) - lastUse(a) || a.seq - b.seq)
    .slice(0, limit);
}
