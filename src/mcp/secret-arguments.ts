/**
 * An MCP server reads whatever its arguments name, under any key: `path`, `url`, `target`, a
 * nested `options.path`, a `FILE://` URI. So every string anywhere in a call's arguments that
 * could name a file is checked against hob's secret matcher, and what a listing tool sends
 * back has the secrets' names taken out.
 */
import { join } from 'node:path';

type IsSensitive = (path: string) => boolean;

/** Deeper or longer arguments than this are not a file name a person would give. */
const MAX_DEPTH = 32;
const MAX_STRINGS = 2000;
const MAX_PATH_LENGTH = 4096;
/** `scheme:` of two letters or more (one letter is a Windows drive, `C:\…`). */
const SCHEME = /^([a-z][a-z0-9+.-]+):/i;

/**
 * The file a string names, or undefined when it names none: a `file:` URI in any letter
 * case (its path), a URL of another scheme than http(s) (its path: `sftp://host/~/.ssh/id_rsa`),
 * or a path (absolute, `~`, relative, or one word such as `id_rsa`). Sentences are not paths.
 */
export function namedPath(value: string): string | undefined {
  const text = value.trim();
  if (text === '' || text.length > MAX_PATH_LENGTH || text.includes('\n')) return undefined;
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (scheme === 'http' || scheme === 'https') return undefined;
    return urlPath(text, scheme.length + 1);
  }
  const pathLike = /^(~|\.|\/|\$HOME|\$\{HOME\})/.test(text) || /[/\\]/.test(text) || !/\s/.test(text);
  return pathLike ? text : undefined;
}

function urlPath(text: string, schemeLength: number): string | undefined {
  let path: string;
  try {
    path = new URL(text).pathname;
  } catch {
    path = text.slice(schemeLength).replace(/^\/\/[^/]*/, '');
  }
  try {
    path = decodeURIComponent(path);
  } catch {
    // a stray % stays as written
  }
  return path === '' ? undefined : path;
}

/** Every string in a value, nested objects and arrays included (values, not keys). */
function strings(value: unknown, found: string[] = [], depth = 0): string[] {
  if (found.length >= MAX_STRINGS || depth > MAX_DEPTH) return found;
  if (typeof value === 'string') found.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, found, depth + 1);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) strings(item, found, depth + 1);
  return found;
}

/** The first argument, anywhere in `args`, that names a secret; undefined when none does. */
export function secretArgument(args: unknown, isSensitive: IsSensitive | undefined): string | undefined {
  if (!isSensitive) return undefined;
  return strings(args).find((value) => {
    const path = namedPath(value);
    return path !== undefined && isSensitive(path);
  });
}

/** Tools that list names: their results are filtered (a file's content never is). */
export function isListingTool(name: string): boolean {
  return /(list|tree|search|find|glob|^ls$|_ls$|dir)/i.test(name);
}

/**
 * A listing without the entries that are secrets: a JSON tree (`directory_tree`'s
 * `{name, children}`), or lines (`[FILE] .npmrc`, a full path from `search_files`). Names
 * are taken relative to the folder the call named; a result that lists nothing secret comes
 * back as it was.
 */
export function withoutSecretNames(text: string, args: unknown, isSensitive: IsSensitive | undefined): string {
  if (!isSensitive) return text;
  const base = strings(args).map(namedPath).find((path) => path !== undefined) ?? '.';
  const isSecret = (name: string) => {
    const path = namedPath(name);
    return path !== undefined && isSensitive(/^[~/]|^[a-z][a-z0-9+.-]+:/i.test(name) ? path : join(base, path));
  };
  const json = parseJson(text);
  if (json !== undefined) {
    const { value, removed } = pruneJson(json, base, isSensitive, isSecret);
    return removed ? JSON.stringify(value, null, 2) : text;
  }
  const lines = text.split('\n');
  const kept = lines.filter((line) => {
    const entry = line.replace(/^\s*\[(FILE|DIR)\]\s+/i, '').trim();
    if (entry === '') return true;
    const candidates = [entry, entry.split(/\s{2,}/)[0] ?? entry];
    return !candidates.some(isSecret);
  });
  return kept.length === lines.length ? text : kept.join('\n');
}

function parseJson(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Drops tree nodes named as secrets (their children go with them) and secret path strings. */
function pruneJson(value: unknown, dir: string, isSensitive: IsSensitive, isSecret: (name: string) => boolean): { value: unknown; removed: boolean } {
  let removed = false;
  const visit = (node: unknown, where: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) return node;
    if (Array.isArray(node)) {
      const kept: unknown[] = [];
      for (const item of node) {
        const name = typeof item === 'string' ? item : isNamed(item) ? item.name : undefined;
        const secret = name !== undefined && (typeof item === 'string' ? isSecret(item) : isSensitive(join(where, name)));
        if (secret) removed = true;
        else kept.push(visit(item, where, depth + 1));
      }
      return kept;
    }
    if (typeof node === 'object' && node !== null) {
      const inner = isNamed(node) ? join(where, node.name) : where;
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, visit(item, inner, depth + 1)]));
    }
    return node;
  };
  return { value: visit(value, dir, 0), removed };
}

function isNamed(value: unknown): value is { name: string } {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}
