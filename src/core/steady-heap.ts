import { setFlagsFromString } from 'node:v8';

/**
 * How far the old generation may grow past what the last full collection kept before V8
 * collects it again, for `hob start` (a server that runs for weeks): set once its channels
 * are up (App.warmUp), so start-up, which makes most of its garbage young, is not slowed.
 *
 * hob holds ~30 MB in its old generation and does not grow, but each message leaves ~80 KB
 * there that only a full collection frees (mostly fetch's objects for each request and the
 * model request's body: `bench/profile.ts promoted` shows them). V8 lets the old generation grow up to four times
 * what the last full collection kept when the machine has memory to spare (its heap limit is
 * a quarter of RAM), so over 5,000 messages RSS climbed from 185 to 350 MB; with this bound
 * it stays near 170 MB, at the price of a full collection (tens of milliseconds, mostly on
 * V8's helper threads) every few hundred messages. This bounds the growth, not the size: a
 * heap limit (`--max-old-space-size`) would also keep it flat, but can only be set when node
 * starts, and would end hob with "out of memory" where this only collects sooner.
 */
export const HEAP_GROWING_PERCENT = 50;

/** Sets the growth bound, unless the person set V8's heap growth themselves (NODE_OPTIONS or node's flags). */
export function keepHeapSteady(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  return setUnlessOwn(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--heap-growing-percent=0', /^--heap[-_]growing[-_]percent\b/, execArgv, nodeOptions);
}

/**
 * How much a WebAssembly function must run before V8 compiles it again with its optimizing
 * compiler, for `hob start`: about a thousand times V8's own (1,800,000), which one small HTTP
 * answer used up, so only a copy of undici that parses a thousand answers gets optimized.
 *
 * The only WebAssembly hob runs is llhttp, undici's HTTP parser, of which four copies load
 * (three inside the chat SDKs, one in Node's fetch). Its parsing loop is one
 * 33 KB function, and V8's budget runs out on the first HTTP answer it parses (the socket's
 * handshake at start-up): optimizing it then took ~30 MB of compiler memory on a helper thread
 * (V8's zones, through malloc) and 1.5–4 s of that thread's CPU on a loaded machine, right as
 * the channels came up (RSS when up 130–142 MB, then ~124 once it was done; with the budget
 * raised 104–112, then ~116: bench/memory-where.ts). Its first tier parses a handshake
 * or a download just as well: hob's own model and channel calls go through node:http
 * (core/lean-fetch.ts), not undici. Set before any channel loads (the parser's budget is
 * taken when a copy of undici loads it).
 */
export const WASM_TIERING_BUDGET = 2_000_000_000;

/** Raises the budget, unless the person tuned V8's WebAssembly tiers themselves. */
export function holdWasmTierUp(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  return setUnlessOwn(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`, '--wasm-tiering-budget=1800000', /^--(no-)?(wasm[-_]tiering[-_]budget|wasm[-_]tier[-_]up|wasm[-_]dynamic[-_]tiering|liftoff)\b/, execArgv, nodeOptions);
}

/**
 * Where the flags hob changed are noted, each as `[the flag as set, V8's default]`, for
 * bin/code-cache.mjs: V8 takes a code cache only under the flags it was written with, and the
 * next start begins with the defaults, so the loader puts them back while it writes one.
 */
const FLAGS_CHANGED = Symbol.for('hob.v8-flags-changed');

/** Sets `flag` unless one of node's own flags or NODE_OPTIONS matches `own`; `atStart` is V8's default for it. */
function setUnlessOwn(flag: string, atStart: string, own: RegExp, execArgv: readonly string[], nodeOptions: string): boolean {
  if ([...execArgv, ...nodeOptions.split(/\s+/)].some((given) => own.test(given))) return false;
  setFlagsFromString(flag);
  const noted = globalThis as { [FLAGS_CHANGED]?: Array<[string, string]> };
  (noted[FLAGS_CHANGED] ??= []).push([flag, atStart]);
  return true;
}
