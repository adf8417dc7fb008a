// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. better-sqlite3 stays external (a native
// addon); channel SDKs sit in split chunks that load only when their channel is configured;
// the PostgreSQL store's worker thread is a second entry point.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

// esbuild puts each module in a chunk of its own set of entry points (every `import()` is one),
// and node pays ~0.5-1 ms of CPU for each file it loads, whatever its size. A small module that
// both the always-loaded channel list (adapters/<name>/index.ts) and a channel's lazily loaded
// adapter import, or that several channels' adapters share, became a file of a few hundred
// bytes on `hob start`'s way to its channels (a dozen of them). These modules hold no state and
// no identity that matters (frozen data, functions, and classes nothing tests with instanceof;
// graphemes.ts's cached Intl.Segmenter is only a cache): each channel's adapter code gets a copy
// of its own (the same source under a `?<channel>` suffix, so esbuild bundles it into that
// channel's chunk), the rest of hob the one it had. A module with state that must be one
// (a Map of pending work, a class behind instanceof: PartialSendError in gateway/channel.ts)
// must not be listed: two copies would not see each other.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const COPIED_PER_CHANNEL = [
  'adapters/logger.ts',
  'adapters/discord/capabilities.ts',
  'adapters/slack/capabilities.ts',
  'adapters/telegram/capabilities.ts',
  'adapters/web/capabilities.ts',
  'src/core/lean-fetch.ts',
  'src/gateway/edited-live-answer.ts',
  'src/gateway/send-parts.ts',
  'src/gateway/format/graphemes.ts',
  'src/gateway/format/markdown-walk.ts',
  'src/gateway/format/plain-text.ts',
  'src/gateway/format/split.ts',
].map((path) => join(ROOT, path));

/**
 * Which copies adapter code `file` takes: its channel's (not for the always-loaded index.ts and
 * config.ts), or for a module the channel loads with `import()` (telegram/html.ts) one of its
 * own, which lands in that module's chunk instead of one shared with the adapter's.
 */
function copiesOf(file, lazy) {
  const match = /[\\/]adapters[\\/]([a-z]+)[\\/]([a-z-]+)\.ts$/.exec(file);
  if (!match || match[2] === 'index' || match[2] === 'config') return undefined;
  return lazy.has(`${match[1]}/${match[2]}`) ? `${match[1]}-${match[2]}` : match[1];
}

/** "telegram/html" for each `import('./html.js')` in adapters/telegram/*.ts. */
function lazilyLoadedAdapterModules() {
  const lazy = new Set();
  for (const channel of readdirSync(join(ROOT, 'adapters'), { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
    for (const file of readdirSync(join(ROOT, 'adapters', channel.name)).filter((name) => name.endsWith('.ts'))) {
      for (const [, module] of readFileSync(join(ROOT, 'adapters', channel.name, file), 'utf8').matchAll(/import\('\.\/([a-z-]+)\.js'\)/g)) lazy.add(`${channel.name}/${module}`);
    }
  }
  return lazy;
}

const copiesPerChannel = {
  name: 'copies-per-channel',
  setup(builder) {
    const lazy = lazilyLoadedAdapterModules();
    builder.onResolve({ filter: /^\.\.?\// }, (args) => {
      // An import from a copy takes the same copies; one from a channel's own code starts them.
      const copies = args.pluginData?.copies ?? copiesOf(args.importer, lazy);
      if (!copies) return undefined;
      const path = resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'));
      return COPIED_PER_CHANNEL.includes(path) ? { path, suffix: `?${copies}` } : undefined;
    });
    builder.onLoad({ filter: /\.ts$/ }, async (args) =>
      args.suffix ? { contents: await readFile(args.path, 'utf8'), loader: 'ts', resolveDir: dirname(args.path), pluginData: { copies: args.suffix.slice(1) } } : undefined,
    );
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
    plugins: [zodEnglishOnly, zodLazyInitializers, fdirBundledPicomatch, copiesPerChannel],
  };
}

/**
 * Removes the chunks esbuild writes with no code in them (zod's index.js, a bare re-export:
 * an empty file that start-up loaded all the same), and each `import"./chunk-….js";` of them,
 * blanked to spaces of the same length so the source maps of its importers still line up.
 * Evaluating an empty module does nothing, so nothing runs otherwise than before.
 */
export function dropEmptyChunks(outdir) {
  const outputs = readdirSync(outdir).filter((name) => name.endsWith('.js'));
  const banner = bundleOptions({}, outdir).banner.js;
  const empty = outputs.filter((name) => name.startsWith('chunk-') && readFileSync(join(outdir, name), 'utf8').replace(banner, '').replace(/\/\/# sourceMappingURL=\S+/, '').trim() === '');
  if (empty.length === 0) return;
  for (const name of outputs.filter((output) => !empty.includes(output))) {
    const path = join(outdir, name);
    const source = readFileSync(path, 'utf8');
    const blanked = empty.reduce((text, chunk) => text.replaceAll(`import"./${chunk}";`, (statement) => ' '.repeat(statement.length)), source);
    if (blanked !== source) writeFileSync(path, blanked);
  }
  for (const name of empty) for (const file of [name, `${name}.map`]) rmSync(join(outdir, file), { force: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Chunk names carry content hashes, so each build starts from an empty folder; it is built
  // beside dist/ and swapped in, so dist/ is never seen half-written.
  const staging = `dist.${process.pid}`;
  await build(bundleOptions(ENTRY_POINTS, staging));
  dropEmptyChunks(staging);
  rmSync('dist', { recursive: true, force: true });
  renameSync(staging, 'dist');
}
