/**
 * Reads V8 heap snapshots (`.heapsnapshot`, as `--heapsnapshot-signal` writes them) into
 * self size per constructor, and compares two of them: what holds the heap, and what grew.
 */
import { readFileSync } from 'node:fs';
import { fmtBytes } from './stats.js';

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
};

/** Types whose node names are their contents (a string's text, a function's code): grouped by type alone. */
const BY_TYPE_ONLY = new Set(['string', 'concatenated string', 'sliced string', 'code', 'number', 'bigint', 'symbol', 'regexp']);

/** Self size by "type: constructor" (strings and code by type alone), and the total. */
export function sizeByConstructor(path: string): { total: number; sizes: Map<string, number> } {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const sizes = new Map<string, number>();
  let total = 0;
  for (let at = 0; at < heap.nodes.length; at += width) {
    const type = types[heap.nodes[at + typeAt] as number] ?? 'unknown';
    const size = heap.nodes[at + sizeAt] as number;
    const name = heap.strings[heap.nodes[at + nameAt] as number] ?? '';
    const key = BY_TYPE_ONLY.has(type) ? `(${type})` : type === 'closure' ? `closure ${name || '(anonymous)'}` : `${type}: ${name.slice(0, 60)}`;
    sizes.set(key, (sizes.get(key) ?? 0) + size);
    total += size;
  }
  return { total, sizes };
}

/** Lines: the heap at `first` and `second`, the `top` biggest holders at `second` and the `top` that grew most. */
export function heapByConstructor(first: string, second: string, top: number): string[] {
  const before = sizeByConstructor(first);
  const after = sizeByConstructor(second);
  const growth = [...after.sizes].map(([name, size]) => [name, size - (before.sizes.get(name) ?? 0)] as const);
  return [
    `heap (self sizes): ${fmtBytes(before.total)} after the warm-up, ${fmtBytes(after.total)} at the end`,
    'biggest at the end:',
    ...[...after.sizes].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, size]) => `  ${fmtBytes(size).padStart(9)}  ${name}`),
    'grew most between the snapshots:',
    ...growth.sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, size]) => `  ${`+${fmtBytes(size)}`.padStart(10)}  ${name}`),
  ];
}
