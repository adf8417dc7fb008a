// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. better-sqlite3 stays external (a native
// addon); channel SDKs sit in split chunks that load only when their channel is configured;
// the PostgreSQL store's worker thread is a second entry point.
import { renameSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// zod's API re-exports every locale (`z.locales`: 60+ languages, ~340 KB of source) as a
// namespace, which a bundler cannot shake out, so each start compiled them all. hob's messages
// are zod's default English: the namespace holds only that one.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`) ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

// zod declares each of its ~175 schema kinds as `$constructor(name, (inst, def) => {...})`. V8
// parses an arrow function in a call's arguments in full, where it only pre-parses a
// `function` (and compiles it on its first call): zod's chunk compiled at ~160 ms/MB against
// ~25 for the rest of dist/, ~7 ms of each start for kinds hob never builds. The initializers
// are called plainly (`initializer(inst, def)`) in strict code and use neither `this` nor
// `arguments`, so the two forms behave alike.
const zodLazyInitializers = {
  name: 'zod-lazy-initializers',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/](core|classic)[\\/][a-z-]+\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replaceAll('(inst, def) => {', 'function (inst, def) {'),
      loader: 'js',
    }));
  },
};

// fdir (tinyglobby's crawler, for the glob tool) looks for picomatch with a runtime require()
// when its module is evaluated, for a `.glob()` hob never calls (tinyglobby matches on its own):
// node resolved picomatch in node_modules and compiled a second copy of it at each start. It
// takes the bundled copy instead.
const fdirBundledPicomatch = {
  name: 'fdir-bundled-picomatch',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/]fdir[\\/]dist[\\/]index\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const lookup = '__require.resolve("picomatch");\n\tpm = __require("picomatch");';
      // A newer fdir that looks for it otherwise is bundled as it is.
      if (!source.includes(lookup)) return undefined;
      return { contents: `import __bundledPicomatch from 'picomatch';\n${source.replace(lookup, 'pm = __bundledPicomatch;')}`, loader: 'js' };
    });
  },
};

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
    external: ['better-sqlite3', 'pg-native'],
    // CommonJS dependencies call require() for Node built-ins; ESM output needs one in scope.
    banner: { js: "import { createRequire as __hobRequire } from 'node:module'; const require = __hobRequire(import.meta.url);" },
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
    plugins: [zodEnglishOnly, zodLazyInitializers, fdirBundledPicomatch],
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Chunk names carry content hashes, so each build starts from an empty folder; it is built
  // beside dist/ and swapped in, so dist/ is never seen half-written.
  const staging = `dist.${process.pid}`;
  await build(bundleOptions(ENTRY_POINTS, staging));
  rmSync('dist', { recursive: true, force: true });
  renameSync(staging, 'dist');
}
