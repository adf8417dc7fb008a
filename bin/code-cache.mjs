// Loads dist/ as node's own loader does (the same ES modules, in the same context, linked the
// same way) but keeps what V8 compiled between starts, as node 22's compile cache does and node
// 20 cannot for ES modules: each file of dist/ is compiled through vm.SourceTextModule, from
// the code cache a start before wrote beside it when there is one. Without it V8 parses every
// chunk at each start (~100 ms of `hob start`'s CPU) and compiles each function again the first
// time it runs; with it, it reads what it had, functions included.
//
// V8 takes a cache only under the flags it was written with (it checks their hash) and for a
// source of the same length; a cache is therefore kept per file content (its size and
// modification time) and per node version and flags, and one it refuses is compiled without
// and written again. `import()` in a module compiled from a cache cannot reach the callback
// node 20 keeps per module (the cache carries the first process's key for it), so the build
// routes every `import(` of dist/ through `__hobI` (scripts/dynamic-imports.mjs), which finds
// the loader under IMPORT.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';

/** Where dist/'s `__hobI(base, specifier)` finds the loader's import (scripts/dynamic-imports.mjs). */
export const IMPORT = Symbol.for('hob.import');
/**
 * V8 flags hob changes while it runs, each as `[the flag as set, as it was at start]`
 * (src/core/steady-heap.ts): put back while a file compiles and while a cache is written.
 */
export const FLAGS_CHANGED = Symbol.for('hob.v8-flags-changed');

/**
 * Whether this node can load through the cache: `vm.SourceTextModule` needs
 * `--experimental-vm-modules`. Not with `--enable-source-maps` either: node 20 maps the stack
 * traces of the files its own loader loaded, not of vm modules, and whoever asks for the maps
 * wants them more than a quicker start.
 */
export function canCache() {
  return typeof vm.SourceTextModule === 'function' && !process.sourceMapsEnabled;
}

/**
 * Imports `entry` (a file of dist/) and everything it imports, caches in `cacheDir`. Caches
 * missing or refused are written `writeAfterMs` after the start (by then a server has run its
 * start and its functions are compiled) and, for files loaded later, when the process exits.
 */
export async function importWithCodeCache(entry, cacheDir, { writeAfterMs = 5_000 } = {}) {
  const { SourceTextModule, SyntheticModule } = vm;
  const distUrl = pathToFileURL(`${dirname(entry)}/`).href;
  const flagsTag = fnv1a([process.version, process.arch, ...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));
  const chunks = new Map();
  const builtins = new Map();
  /** The files compiled without a cache (none yet, or refused), to write one for. */
  const uncached = [];

  function compile(url) {
    const file = fileURLToPath(url);
    // Its time before its text: a file written in between is then cached under its older time, which the next start no longer finds.
    const { size, mtimeMs } = statSync(file);
    const source = readFileSync(file, 'utf8');
    const key = `${size}-${Math.trunc(mtimeMs)}`;
    const cacheFile = join(cacheDir, `${basename(file)}.${key}.${flagsTag}.cache`);
    const options = {
      identifier: url,
      initializeImportMeta(meta) {
        meta.url = url;
        meta.filename = file;
        meta.dirname = dirname(file);
      },
    };
    let cachedData;
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // None yet: compiled from the source, and written later.
    }
    if (cachedData) {
      try {
        return underStartFlags(() => new SourceTextModule(source, { ...options, cachedData }));
      } catch (error) {
        if (error?.code !== 'ERR_VM_MODULE_CACHED_DATA_REJECTED') throw error;
      }
    }
    const module = underStartFlags(() => new SourceTextModule(source, options));
    uncached.push({ file, key, cacheFile, source, options });
    return module;
  }

  function chunk(url) {
    let module = chunks.get(url);
    if (!module) {
      module = compile(url);
      chunks.set(url, module);
    }
    return module;
  }

  /** A node built-in or a package outside dist/ (better-sqlite3), as node's loader gives it. */
  function builtin(specifier) {
    let module = builtins.get(specifier);
    if (!module) {
      module = import(specifier).then((namespace) => {
        const names = Object.keys(namespace);
        return new SyntheticModule(names, function () {
          for (const name of names) this.setExport(name, namespace[name]);
        }, { identifier: specifier });
      });
      builtins.set(specifier, module);
    }
    return module;
  }

  async function linker(specifier, referrer) {
    return specifier.startsWith('./') ? chunk(new URL(specifier, referrer.identifier).href) : builtin(specifier);
  }

  // The modules import()ed at once load one import at a time, each step of one (compiling its
  // file, linking it, starting its top level) after a turn of the event loop. The channels'
  // SDKs are imported together, and each chunk is tens of milliseconds of compiling and running
  // in one piece: Telegram's, the smallest, is in and sends its getMe and deleteWebhook while
  // the others have not started compiling, and its answers are taken between their steps, so
  // its getUpdates goes out while the others still load instead of after the last SDK is in.
  // Two imports never link at once (they could both link a module they share). Only the start
  // of a top level waits in turn, never its end: a top level that awaits an import() of its own
  // cannot wait on itself.
  let turn = Promise.resolve();
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  async function load(url) {
    const known = chunks.get(url);
    if (known?.status === 'evaluated') return known;
    const mine = turn.then(nextTurn);
    let release = () => {};
    turn = mine.then(() => new Promise((resolve) => (release = resolve)));
    await mine;
    let module;
    try {
      module = chunk(url);
      if (module.status === 'unlinked') {
        await module.link(linker);
        await nextTurn();
      }
      if (module.status === 'linked') void module.evaluate().catch(() => {});
    } finally {
      release();
    }
    // An import() of a module whose top level is running (one that imports itself) waits for it, as node's does.
    while (module.status === 'evaluating' || module.status === 'linking') await nextTurn();
    await module.evaluate();
    return module;
  }

  globalThis[IMPORT] = async (base, specifier, options) => {
    if (typeof specifier === 'string' && specifier.startsWith('./') && base.startsWith(distUrl)) {
      return (await load(new URL(specifier, base).href)).namespace;
    }
    return import(specifier, options);
  };

  const startProbe = underStartFlags(probe);
  const write = () => writeCaches(uncached.splice(0), cacheDir, startProbe);
  setTimeout(write, writeAfterMs).unref();
  process.once('exit', write);

  await load(pathToFileURL(entry).href);
}

/**
 * Writes a cache for each module compiled without one, unless V8's flags differ from those at
 * start in a way hob did not note (the next start would refuse them). A module already
 * evaluated cannot give its cache, so a second one is made from the same source: V8 hands it
 * what it compiled for the first, the functions run since included.
 */
function writeCaches(modules, cacheDir, startProbe) {
  if (modules.length === 0) return;
  try {
    underStartFlags(() => {
      if (!probe().subarray(0, 16).equals(startProbe.subarray(0, 16))) throw new Error('V8 flags changed since the start');
    });
    mkdirSync(cacheDir, { recursive: true });
    const present = readdirSync(cacheDir);
    for (const { file, key, cacheFile, source, options } of modules) {
      const data = underStartFlags(() => new vm.SourceTextModule(source, options).createCachedData());
      const temp = `${cacheFile}.${process.pid}`;
      writeFileSync(temp, data);
      renameSync(temp, cacheFile);
      // Caches of the file's earlier contents go (those of the same content under other flags stay).
      const name = basename(file);
      for (const old of present) {
        if (old.startsWith(`${name}.`) && !old.startsWith(`${name}.${key}.`)) rmSync(join(cacheDir, old), { force: true });
      }
    }
  } catch {
    // A folder that cannot be written (a read-only install), or flags changed that hob did not
    // note: no cache, and the next start is as fast as one without, no slower.
  }
}

/**
 * A tiny module's cache: its header holds V8's version and the hash of its flags (bytes 4–7
 * and 12–15 of the first 16, which writeCaches compares with those at start).
 */
function probe() {
  return new vm.SourceTextModule('export {};', { identifier: 'hob:code-cache-probe' }).createCachedData();
}

/**
 * Runs `make` (a compile, or a cache's write) under V8's flags as the process started, the
 * ones hob changed since put back for the while (none of them changes how JavaScript compiles):
 * every cache is then written and read under the same flags, whichever moment of the start
 * loads its file. Also without node's one-time "VM Modules is an experimental feature" warning
 * (hob's loader uses them, not the person's code).
 */
function underStartFlags(make) {
  const changed = globalThis[FLAGS_CHANGED] ?? [];
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => (String(warning).startsWith('VM Modules') ? undefined : emitWarning.call(process, warning, ...rest));
  for (const [, atStart] of changed) setFlagsFromString(atStart);
  try {
    return make();
  } finally {
    for (const [set] of changed) setFlagsFromString(set);
    process.emitWarning = emitWarning;
  }
}

/** FNV-1a, 32 bits, in hex: a short tag for node's version and flags (node:crypto is not loaded for it). */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}
