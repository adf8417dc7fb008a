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

type Graph = Snapshot & { edges: number[]; snapshot: { meta: { edge_fields: string[]; edge_types: [string[], ...unknown[]] } } };

/**
 * What the objects new in `second` (ids absent from `first`) hang from: for each, the path up
 * its retainers to the nearest object that was already there, grouped by that holder and the
 * edges on the way, by self size. Shows which long-lived object gained what grew.
 */
export function growthByHolder(first: string, second: string, top: number): string[] {
  const old = new Set<number>();
  {
    const heap = JSON.parse(readFileSync(first, 'utf8')) as Snapshot;
    const width = heap.snapshot.meta.node_fields.length;
    const idAt = heap.snapshot.meta.node_fields.indexOf('id');
    for (let at = 0; at < heap.nodes.length; at += width) old.add(heap.nodes[at + idAt] as number);
  }
  const heap = JSON.parse(readFileSync(second, 'utf8')) as Graph;
  const fields = heap.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((field) => fields.indexOf(field)) as [number, number, number, number, number];
  const edgeFields = heap.snapshot.meta.edge_fields;
  const edgeWidth = edgeFields.length;
  const [edgeTypeAt, edgeNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((field) => edgeFields.indexOf(field)) as [number, number, number];
  const nodeTypes = heap.snapshot.meta.node_types[0];
  const edgeTypes = heap.snapshot.meta.edge_types[0];
  const count = heap.nodes.length / width;
  // Retainers of each node: (from node, edge index), weak edges left out.
  const retainers: [number, number][][] = Array.from({ length: count }, () => []);
  for (let node = 0, edge = 0; node < count; node++) {
    const edges = heap.nodes[node * width + edgeCountAt] as number;
    for (let n = 0; n < edges; n++, edge += edgeWidth) {
      if (edgeTypes[heap.edges[edge + edgeTypeAt] as number] === 'weak') continue;
      (retainers[(heap.edges[edge + toAt] as number) / width] as [number, number][]).push([node, edge]);
    }
  }
  const label = (node: number) => {
    const type = nodeTypes[heap.nodes[node * width + typeAt] as number] ?? '?';
    const name = heap.strings[heap.nodes[node * width + nameAt] as number] ?? '';
    return BY_TYPE_ONLY.has(type) ? `(${type})` : `${type}:${name.slice(0, 40)}`;
  };
  const edgeLabel = (edge: number) => {
    const kind = edgeTypes[heap.edges[edge + edgeTypeAt] as number];
    const name = heap.edges[edge + edgeNameAt] as number;
    return kind === 'element' || kind === 'hidden' ? '[]' : `.${heap.strings[name] ?? name}`;
  };
  const isOld = (node: number) => old.has(heap.nodes[node * width + idAt] as number);
  const sizes = new Map<string, number>();
  for (let node = 0; node < count; node++) {
    if (isOld(node)) continue;
    // Breadth first up the retainers to the nearest old object; the path is its label and the edges.
    const seen = new Set([node]);
    let frontier: { node: number; path: string }[] = [{ node, path: '' }];
    let found: string | undefined;
    for (let depth = 0; depth < 12 && frontier.length && !found; depth++) {
      const next: { node: number; path: string }[] = [];
      for (const at of frontier) {
        for (const [from, edge] of retainers[at.node] as [number, number][]) {
          if (seen.has(from)) continue;
          seen.add(from);
          const path = `${edgeLabel(edge)}${at.path}`;
          if (isOld(from)) {
            found = `${label(from)} ${path}`;
            break;
          }
          next.push({ node: from, path: depth < 3 ? path : `…${at.path.slice(-40)}` });
        }
        if (found) break;
      }
      frontier = next;
    }
    const key = `${found ?? '(no old holder)'} → ${label(node)}`;
    sizes.set(key, (sizes.get(key) ?? 0) + (heap.nodes[node * width + sizeAt] as number));
  }
  return [
    'new since the first snapshot, by the old object it hangs from (path of edges → what):',
    ...[...sizes].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, size]) => `  ${fmtBytes(size).padStart(9)}  ${name}`),
  ];
}
