/**
 * Reading CPU and allocation profiles for bench/profile.ts: each sample's cost mapped back to
 * a source file or package through dist/'s source maps, summed by source, by the nearest hob
 * file or package on the stack (so what node does on their behalf counts as theirs) and by
 * function, and a timeline of a profile in slices.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fmt } from './stats.js';

const TOP = Number(process.env.TOP ?? 25);

export type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
/** A profile as a flat list: each frame's own cost and its caller. */
export type Costs = { frame: CallFrame; self: number; parent?: number }[];

const maps = new Map<string, SourceMap | undefined>();

/** Where a profiled frame's code came from: a src/ or adapters/ file, a package, or node itself. */
function origin(frame: CallFrame): { name: string; ours: boolean } {
  if (!frame.url) return { name: frame.functionName || '(native)', ours: false };
  if (!frame.url.startsWith('file://')) return { name: 'node internals', ours: false };
  const file = fileURLToPath(frame.url);
  if (!maps.has(file)) maps.set(file, existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : undefined);
  const source = maps.get(file)?.findEntry(frame.lineNumber, frame.columnNumber);
  const path = source && 'originalSource' in source ? source.originalSource : file;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return { name: pkg[1] as string, ours: true };
  const own = /(src|adapters)\/.+$/.exec(path);
  return { name: own ? own[0] : path, ours: true };
}

/** Cost per message by source, by the nearest hob file or package on the stack, and by function. */
export function summarise(costs: Costs, messages: number, unit: string, format: (value: number) => string, title = `per message over ${messages} messages`): string[] {
  const byOrigin = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byCaller = new Map<string, number>();
  const byOwnCaller = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, value: number) => map.set(key, (map.get(key) ?? 0) + value);
  let total = 0;
  for (const entry of costs) {
    if (entry.self === 0 || entry.frame.functionName === '(idle)') continue;
    total += entry.self;
    const where = origin(entry.frame);
    add(byOrigin, where.name, entry.self);
    add(byFunction, `${entry.frame.functionName || '(anonymous)'} — ${where.name}`, entry.self);
    let caller: (typeof costs)[number] | undefined = entry;
    while (caller && !origin(caller.frame).ours) caller = caller.parent === undefined ? undefined : costs[caller.parent];
    add(byCaller, caller ? origin(caller.frame).name : where.name, entry.self);
    // Past the packages too: which of hob's own files asked for the work (zod's parse, yaml's, a package's load).
    while (caller && !/^(src|adapters)\//.test(origin(caller.frame).name)) caller = caller.parent === undefined ? undefined : costs[caller.parent];
    add(byOwnCaller, caller ? origin(caller.frame).name : '(no hob file on the stack)', entry.self);
  }
  const top = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([name, value]) => `  ${format(value / messages).padStart(9)}${unit}  ${((100 * value) / total).toFixed(1).padStart(5)}%  ${name}`);
  return [
    `${title}: ${format(total / messages)}${unit}`,
    'by source:',
    ...top(byOrigin),
    'by the nearest hob file or package on the stack:',
    ...top(byCaller),
    'by the nearest src/ or adapters/ file on the stack:',
    ...top(byOwnCaller),
    'by function:',
    ...top(byFunction),
  ];
}

export type CpuProfile = { nodes: { id: number; callFrame: CallFrame; children?: number[] }[]; samples: number[]; timeDeltas: number[] };
export type SamplingNode = { callFrame: CallFrame; selfSize: number; children: SamplingNode[] };

/** The profile's self times in milliseconds, of the samples from `fromMs` until `untilMs` (all by default). */
export function cpuCosts(profile: CpuProfile, untilMs = Infinity, fromMs = 0): Costs {
  const index = new Map(profile.nodes.map((node, at) => [node.id, at]));
  const costs: Costs = profile.nodes.map((node) => ({ frame: node.callFrame, self: 0 }));
  profile.nodes.forEach((node, at) => {
    for (const child of node.children ?? []) (costs[index.get(child) as number] as Costs[number]).parent = at;
  });
  let elapsedMs = 0;
  profile.samples.forEach((id, at) => {
    const deltaMs = (profile.timeDeltas[at] ?? 0) / 1000;
    elapsedMs += deltaMs;
    if (elapsedMs <= untilMs && elapsedMs > fromMs) (costs[index.get(id) as number] as Costs[number]).self += deltaMs;
  });
  return costs;
}

export function allocationCosts(head: SamplingNode): Costs {
  const costs: Costs = [];
  const walk = (node: SamplingNode, parent?: number) => {
    const at = costs.push({ frame: node.callFrame, self: node.selfSize, parent }) - 1;
    for (const child of node.children) walk(child, at);
  };
  walk(head);
  return costs;
}

/** Slices of `SLICE_MS` (50) from the profile's start until `untilMs`: busy milliseconds in each, and the nearest hob files or packages on the stack that were busiest. */
export function timeline(profile: CpuProfile, untilMs: number): string[] {
  const SLICE_MS = Number(process.env.SLICE_MS ?? 50);
  const index = new Map(profile.nodes.map((node, at) => [node.id, at]));
  const costs = cpuCosts(profile, 0);
  const slices: { busy: number; by: Map<string, number> }[] = [];
  let elapsedMs = 0;
  profile.samples.forEach((id, at) => {
    // As cpuCosts counts it: the time since the sample before goes to this one.
    const deltaMs = (profile.timeDeltas[at] ?? 0) / 1000;
    elapsedMs += deltaMs;
    if (elapsedMs > untilMs) return;
    const slice = (slices[Math.floor(elapsedMs / SLICE_MS)] ??= { busy: 0, by: new Map() });
    let entry: Costs[number] | undefined = costs[index.get(id) as number];
    if (!entry || entry.frame.functionName === '(idle)') return;
    slice.busy += deltaMs;
    const own = entry.frame.functionName || '(anonymous)';
    while (entry && !origin(entry.frame).ours) entry = entry.parent === undefined ? undefined : costs[entry.parent];
    const name = entry ? origin(entry.frame).name : own;
    slice.by.set(name, (slice.by.get(name) ?? 0) + deltaMs);
  });
  return ['timeline (from node\'s start; busy ms of each slice, then the busiest):', ...Array.from(slices, (slice, at) => {
    const top = slice ? [...slice.by].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name, ms]) => `${name} ${fmt(ms)}`).join(', ') : '';
    return `  ${String(at * SLICE_MS).padStart(5)} ms  ${fmt(slice?.busy ?? 0).padStart(5)}  ${top}`;
  })];
}
