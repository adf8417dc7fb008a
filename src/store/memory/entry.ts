/**
 * One memory entry as hob keeps it: the types every memory user speaks, and how a SQLite row
 * becomes one. The PostgreSQL store (../postgres/memory-search.ts) returns the same types.
 */
import { createHash, randomBytes } from 'node:crypto';

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

/** A `memory_entries` row (tags as JSON). */
export type EntryRow = {
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

/** A stored row as an entry; each store reads `tags` its own way (JSON text, or an array). */
export function entryOf(row: Omit<EntryRow, 'tags'>, tags: string[]): MemoryEntry {
  return {
    id: row.id,
    personId: row.person_id,
    ...(row.title !== null ? { title: row.title } : {}),
    content: row.content,
    tags,
    source: row.source,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.last_used_at !== null ? { lastUsedAt: row.last_used_at } : {}),
    useCount: row.use_count,
  };
}

export function toEntry(row: EntryRow): MemoryEntry {
  return entryOf(row, JSON.parse(row.tags) as string[]);
}

/** The person's token in the full-text index: a hash, so no id can be mistaken for words. */
export function ownerToken(personId: string): string {
  return `o${createHash('sha256').update(personId).digest('hex').slice(0, 20)}`;
}

/** What gets embedded for an entry: its title, content and tags. */
export function embeddingText(row: Pick<EntryRow, 'title' | 'content' | 'tags'>): string {
  const tags = JSON.parse(row.tags) as string[];
  return [row.title, row.content, tags.length ? `(${tags.join(', ')})` : ''].filter(Boolean).join('\n');
}

/** Content compared for "already known": case, spacing and punctuation do not matter. */
export function contentKey(content: string): string {
  return (content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/** Short, unguessable ids: 8 characters from 32 (no 0/1/l/o to misread). */
export function newEntryId(): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  return [...randomBytes(8)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
