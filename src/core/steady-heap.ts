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
  const own = [...execArgv, ...nodeOptions.split(/\s+/)].some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag));
  if (own) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
