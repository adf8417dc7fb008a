// Runs dist/ with what V8 compiled at an earlier start, as node 22's compile cache does and
// node 20 cannot for ES modules: each chunk's script form (dist/script/, scripts/script-form.mjs)
// is compiled as a vm.Script, from the code cache a start before wrote beside it when there is
// one. A script's cache is written after it ran, so it holds every function the start ran, not
// only the top levels a module's cache can hold (a module's can only be made before it runs):
// without them V8 parses each chunk and compiles every function again as it is first called.
//
// V8 takes a cache only under the flags it was written with (it checks their hash) and for a
// source of the same length; a cache is therefore kept per file content (its size and
// modification time) and per node version and flags, and one it refuses is compiled without
// and written again.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';

/** Where dist/'s `__hobI(base, specifier)` finds the loader's import (scripts/dynamic-imports.mjs). */
export const IMPORT = Symbol.for('hob.import');
/**
 * V8 flags hob changes while it runs, each as `[the flag as set, as it was at start]`
 * (src/core/steady-heap.ts): put back while a file compiles and while a cache is written.
 */
export const FLAGS_CHANGED = Symbol.for('hob.v8-flags-changed');
/** dist/'s script forms, in this folder of it (scripts/script-form.mjs's SCRIPT_DIR). */
const SCRIPT_DIR = 'script';

/**
 * Whether to load through the cache: not with `--enable-source-maps`, since node 20 maps the
 * stack traces of the files its own loader loaded only, and whoever asks for the maps wants
 * them more than a quicker start.
 */
export function canCache() {
  return !process.sourceMapsEnabled;
}

/**
 * Runs `entry` (a file of dist/) and everything it imports, caches in `cacheDir`. Without the
 * script forms (a dist/ built before them), node's own loader runs it. Caches missing or
 * refused are written at the first idle moment after the start, or `writeAfterMs` after it at
 * the latest, and, for files loaded later, when the process exits.
 */
export async function importWithCodeCache(entry, cacheDir, { writeAfterMs = 5_000 } = {}) {
  const distDir = dirname(entry);
  const scriptDir = join(distDir, SCRIPT_DIR);
  if (!existsSync(join(scriptDir, basename(entry)))) {
    await import(pathToFileURL(entry).href);
    return;
  }
  const distUrl = pathToFileURL(`${distDir}/`).href;
  const flagsTag = fnv1a([process.version, process.arch, ...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));
  const scripts = new Set(readdirSync(scriptDir));
  // Every chunk sits in dist/, so one require finds the packages and built-ins for all of them.
  const nodeRequire = createRequire(entry);
  /** Each chunk compiled, by file name: its script, the chunks it requires, and once run its module (or the error it threw). */
  const chunks = new Map();

  function compile(name) {
    const file = join(scriptDir, name);
    // Its time before its text: a file written in between is then cached under its older time, which the next start no longer finds.
    const { size, mtimeMs } = statSync(file);
    const source = readFileSync(file, 'utf8');
    const key = `${size}-${Math.trunc(mtimeMs)}`;
    const cacheFile = join(cacheDir, `${name}.${key}.${flagsTag}.cache`);
    let cachedData;
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet: compiled from the source, and written later.
    }
    // The file is one function (scripts/script-form.mjs), compiled from its text as it is: V8
    // keeps that text for the script's life, so the names cut from it below hold nothing more (a
    // slice of a string holds the whole string, and a slice of a copy held the copy: +7 MB RSS).
    const script = underStartFlags(() => new vm.Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) }));
    const requires = Array.from(source.matchAll(REQUIRED), (match) => match[1]);
    const chunk = { name, script, requires, key, cacheFile, uncached: !cachedData || script.cachedDataRejected === true, written: false, module: undefined, error: undefined };
    chunks.set(name, chunk);
    return chunk;
  }

  /** What the chunk exports, run first if it has not been (as node's `require`: a chunk being run hands out what it has so far). */
  function run(name) {
    const chunk = chunks.get(name) ?? compile(name);
    if (chunk.error) throw chunk.error;
    if (chunk.module) return chunk.module.exports;
    const module = { exports: {} };
    chunk.module = module;
    // import.meta is the module's: code that finds files beside its chunk finds them in dist/.
    const file = join(distDir, name);
    const meta = { url: pathToFileURL(file).href, dirname: distDir, filename: file };
    const require = (specifier) => (specifier.startsWith('./') ? run(specifier.slice(2)) : nodeRequire(specifier));
    require.resolve = nodeRequire.resolve;
    require.cache = nodeRequire.cache;
    try {
      chunk.script.runInThisContext().call(undefined, module.exports, require, module, meta, (specifier, options) => globalThis[IMPORT](meta.url, specifier, options));
    } catch (error) {
      chunk.error = error;
      throw error;
    }
    // What esbuild's own CommonJS form marks (scripts/script-form.mjs hands out the exports unmarked).
    if (!Object.hasOwn(module.exports, '__esModule')) Object.defineProperty(module.exports, '__esModule', { value: true });
    return module.exports;
  }

  /** The chunk and the chunks it requires that are not compiled yet. */
  function compileWithRequired(name, seen = new Set()) {
    if (seen.has(name) || chunks.has(name) || !scripts.has(name)) return;
    seen.add(name);
    for (const required of compile(name).requires) compileWithRequired(required, seen);
  }

  // The chunks import()ed at once load one at a time, each step of one (compiling its file and
  // those it requires, then running it) after a turn of the event loop. The channels' SDKs are
  // imported together, and each chunk is tens of milliseconds of compiling and running in one
  // piece: Telegram's, the smallest, is in and sends its getMe and deleteWebhook while the
  // others have not started compiling, and its answers are taken between their steps, so its
  // getUpdates goes out while the others still load instead of after the last SDK is in.
  let turn = Promise.resolve();
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  async function load(name) {
    const known = chunks.get(name);
    if (known?.module && !known.error) return known.module.exports;
    const mine = turn.then(nextTurn);
    let release = () => {};
    turn = mine.then(() => new Promise((resolve) => (release = resolve)));
    await mine;
    try {
      if (!chunks.get(name)?.module) {
        compileWithRequired(name);
        await nextTurn();
      }
      return run(name);
    } finally {
      release();
    }
  }

  globalThis[IMPORT] = async (base, specifier, options) => {
    if (typeof specifier === 'string' && specifier.startsWith('./') && base.startsWith(distUrl) && scripts.has(specifier.slice(2))) return load(specifier.slice(2));
    // Anything else as the chunk's own import() would take it: a relative name from the chunk's place.
    return import(typeof specifier === 'string' && /^\.\.?\//.test(specifier) ? new URL(specifier, base).href : specifier, options);
  };

  const startProbe = underStartFlags(probe);
  const write = () => writeCaches([...chunks.values()].filter((chunk) => chunk.uncached && !chunk.written && chunk.module && !chunk.error), cacheDir, startProbe);
  writeOnceIdle(write, writeAfterMs);
  process.once('exit', write);

  await load(basename(entry));
}

/** How long one look at the event loop lasts, and how busy it may have been for the start to count as done. */
const IDLE_LOOK_MS = 100;
const IDLE_UTILIZATION = 0.1;

/**
 * Calls `write` at the first look in which the event loop was (nearly) idle, the start done,
 * or `atMostMs` after the start whatever it does. A cache then holds what a start runs, as a
 * person's first start after an update makes it: written later, under messages, it held every
 * function they ran too, and the next start read all of them before its first message (RSS
 * when three channels were up +2.6 MB).
 */
function writeOnceIdle(write, atMostMs) {
  const started = performance.now();
  let last = performance.eventLoopUtilization();
  const look = () => {
    const now = performance.eventLoopUtilization();
    const idle = performance.eventLoopUtilization(now, last).utilization <= IDLE_UTILIZATION;
    last = now;
    if (idle || performance.now() - started >= atMostMs) write();
    else setTimeout(look, Math.min(IDLE_LOOK_MS, Math.max(0, atMostMs - (performance.now() - started)))).unref();
  };
  setTimeout(look, Math.min(IDLE_LOOK_MS, atMostMs)).unref();
}

/** Each `require("./chunk.js")` of a script form: the chunks it runs first. */
const REQUIRED = /\brequire\("\.\/([^"]+\.js)"\)/g;

/**
 * Writes a cache for each chunk that had none (or one V8 refused), with every function it has
 * run by now, unless V8's flags differ from those at start in a way hob did not note (the next
 * start would refuse them).
 */
function writeCaches(chunks, cacheDir, startProbe) {
  if (chunks.length === 0) return;
  try {
    underStartFlags(() => {
      if (!probe().subarray(0, 16).equals(startProbe.subarray(0, 16))) throw new Error('V8 flags changed since the start');
    });
    mkdirSync(cacheDir, { recursive: true });
    const present = readdirSync(cacheDir);
    for (const chunk of chunks) {
      chunk.written = true;
      const data = underStartFlags(() => chunk.script.createCachedData());
      const temp = `${chunk.cacheFile}.${process.pid}`;
      writeFileSync(temp, data);
      renameSync(temp, chunk.cacheFile);
      // Caches of the file's earlier contents go (those of the same content under other flags stay).
      for (const old of present) {
        if (old.startsWith(`${chunk.name}.`) && !old.startsWith(`${chunk.name}.${chunk.key}.`)) rmSync(join(cacheDir, old), { force: true });
      }
    }
  } catch {
    // A folder that cannot be written (a read-only install), or flags changed that hob did not
    // note: no cache, and the next start is as fast as one without, no slower.
  }
}

/**
 * A tiny script's cache: its header holds V8's version and the hash of its flags (bytes 4–7
 * and 12–15 of the first 16, which writeCaches compares with those at start).
 */
function probe() {
  return new vm.Script('0', { filename: 'hob:code-cache-probe' }).createCachedData();
}

/**
 * Runs `make` (a compile, or a cache's write) under V8's flags as the process started, the
 * ones hob changed since put back for the while (none of them changes how JavaScript
 * compiles): every cache is then written and read under the same flags, whichever moment of
 * the start loads its file.
 */
function underStartFlags(make) {
  const changed = globalThis[FLAGS_CHANGED] ?? [];
  for (const [, atStart] of changed) setFlagsFromString(atStart);
  try {
    return make();
  } finally {
    for (const [set] of changed) setFlagsFromString(set);
  }
}

/** FNV-1a, 32 bits, in hex: a short tag for node's version and flags (node:crypto is not loaded for it). */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}
