import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { MEMORY_SOURCES, type MemoryEntry, type MemorySource, type StoredEntry } from '../store/memory/entry.js';

/**
 * Memory as Markdown: `MEMORY.md` (an index) and `entries/<id>.md` per entry — YAML front
 * matter with every field, then the content exactly as stored. Import reads the entry files
 * back without loss (the index is for people).
 */
export function exportMarkdown(dir: string, personId: string, entries: MemoryEntry[]): void {
  mkdirSync(join(dir, 'entries'), { recursive: true });
  for (const entry of entries) writeFileSync(join(dir, 'entries', `${entry.id}.md`), entryFile(entry));
  const index = [
    `# Memory of ${personId}`,
    '',
    `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, newest first. Each links to its file; \`hob memory import\` reads the files back.`,
    '',
    ...entries.map((entry) => `- [${escapeLink(entry.title ?? firstLine(entry.content))}](entries/${entry.id}.md) — ${entry.source}, updated ${new Date(entry.updatedAt).toISOString().slice(0, 10)}`),
    '',
  ];
  writeFileSync(join(dir, 'MEMORY.md'), index.join('\n'));
}

function entryFile(entry: MemoryEntry): string {
  const front: Record<string, unknown> = {
    id: entry.id,
    ...(entry.title !== undefined ? { title: entry.title } : {}),
    tags: entry.tags,
    source: entry.source,
    created: new Date(entry.createdAt).toISOString(),
    updated: new Date(entry.updatedAt).toISOString(),
    ...(entry.lastUsedAt !== undefined ? { last_used: new Date(entry.lastUsedAt).toISOString() } : {}),
    use_count: entry.useCount,
  };
  return `---\n${stringify(front)}---\n${entry.content}`;
}

/** Reads every `entries/*.md` under dir; throws an error naming the file and what is wrong. */
export function importMarkdown(dir: string): StoredEntry[] {
  const folder = join(dir, 'entries');
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.md')).sort();
  } catch {
    throw new Error(`${folder} does not exist: point hob memory import at a folder written by hob memory export.`);
  }
  return names.map((name) => parseEntryFile(readFileSync(join(folder, name), 'utf8'), join(folder, name)));
}

function parseEntryFile(text: string, where: string): StoredEntry {
  const match = /^---\n([\s\S]*?\n)---\n/.exec(text);
  if (!match) throw new Error(`${where}: expected YAML front matter between --- lines at the top.`);
  const front = parse(match[1] as string) as Record<string, unknown>;
  const content = text.slice(match[0].length);
  const id = front.id;
  const source = front.source;
  if (typeof id !== 'string' || !/^[\w-]{1,64}$/.test(id)) throw new Error(`${where}: "id" must be a short word (letters, digits, - or _).`);
  if (typeof source !== 'string' || !isSource(source)) throw new Error(`${where}: "source" must be one of ${MEMORY_SOURCES.join(', ')}.`);
  if (!content.trim()) throw new Error(`${where}: the entry has no content after the front matter.`);
  const tags = Array.isArray(front.tags) ? front.tags.map(String) : [];
  return {
    id,
    ...(typeof front.title === 'string' ? { title: front.title } : {}),
    content,
    tags,
    source,
    createdAt: time(front.created, where, 'created'),
    updatedAt: time(front.updated, where, 'updated'),
    ...(front.last_used !== undefined ? { lastUsedAt: time(front.last_used, where, 'last_used') } : {}),
    useCount: typeof front.use_count === 'number' ? front.use_count : 0,
  };
}

function isSource(value: string): value is MemorySource {
  return (MEMORY_SOURCES as readonly string[]).includes(value);
}

function time(value: unknown, where: string, field: string): number {
  const parsed = typeof value === 'string' ? Date.parse(value) : value instanceof Date ? value.getTime() : Number.NaN;
  if (Number.isNaN(parsed)) throw new Error(`${where}: "${field}" must be a date like 2026-12-01T10:00:00.000Z.`);
  return parsed;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function escapeLink(text: string): string {
  return text.replace(/([[\]\\])/g, '\\$1');
}
