// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. Only better-sqlite3's native addon is loaded
// from node_modules (src/core/sqlite-addon.ts); channel SDKs sit in split chunks that load only
// when their channel is configured; the PostgreSQL store's worker thread is a second entry point.
// Beside them, the SQLite file a new store starts as (scripts/new-store.mjs), and in dist/script/
// each chunk again as a script, which the bin runs (scripts/script-form.mjs).
import { renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { IMPORT_BANNER, routeDynamicImports } from './dynamic-imports.mjs';
import { writeNewStore } from './new-store.mjs';
import { writeScriptForms } from './script-form.mjs';
import { fdirBundledPicomatch, laterLibraryParts, onePackageCopy, oneWrapPerLibrary, zodEnglishOnly, zodLazyInitializers } from './bundle-plugins.mjs';

/** The entry points of dist/; a Worker loads a file, so the PostgreSQL worker is one of them. */
export const ENTRY_POINTS = { cli: 'src/cli.ts', 'postgres-worker': 'src/store/postgres/worker.ts' };

/**
 * How hob is bundled. Entry names are flat, so every output (entry or chunk) sits at the top
 * of `outdir`: src/store/postgres/bridge.ts finds `postgres-worker.js` beside its own chunk.
 */
export function bundleOptions(entryPoints, outdir) {
  return {
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // pg's optional native binding (pg-native) is never used: hob speaks the protocol in JS.
    // better-sqlite3's JavaScript is bundled; its addon is handed to it (src/core/sqlite-addon.ts).
    external: ['pg-native'],
    // CommonJS dependencies call require() for Node built-ins; ESM output needs one in scope.
    // `__hobI`: every import() of dist/, routed to bin/code-cache.mjs's loader when it runs (scripts/dynamic-imports.mjs).
    banner: { js: `import { createRequire as __hobRequire } from 'node:module'; const require = __hobRequire(import.meta.url); ${IMPORT_BANNER}` },
    sourcemap: true,
    sourcesContent: false,
    // Without comments and indentation. The packages' comments hold characters beyond Latin-1
    // (’, —, emoji), and one such character makes V8 keep a whole chunk's source as two bytes
    // a character: discord.js's 4 MB chunk took 8 MB of heap for as long as hob runs. Names
    // stay as they are; the source maps lead back to the sources (node --enable-source-maps).
    minifyWhitespace: true,
    // Shorter forms of the same code (constant folding, `a && b` for `if (a) b`, dead branches
    // dropped): ~3% less source for node to read, decode and compile at each start. Names are
    // untouched (minifyIdentifiers stays off), so stack traces still name each function.
    minifySyntax: true,
    logLevel: 'warning',
    plugins: [oneWrapPerLibrary, onePackageCopy(), laterLibraryParts, zodEnglishOnly, zodLazyInitializers, fdirBundledPicomatch],
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Chunk names carry content hashes, so each build starts from an empty folder; it is built
  // beside dist/ and swapped in, so dist/ is never seen half-written.
  const staging = `dist.${process.pid}`;
  const options = bundleOptions(ENTRY_POINTS, staging);
  await build(options);
  await routeDynamicImports(staging);
  await writeScriptForms(staging, options.banner.js);
  await writeNewStore(staging);
  rmSync('dist', { recursive: true, force: true });
  renameSync(staging, 'dist');
}
