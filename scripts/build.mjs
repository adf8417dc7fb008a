// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. better-sqlite3 stays external (a native
// addon); channel SDKs sit in split chunks that load only when their channel is configured.
import { renameSync, rmSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
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

// Chunk names carry content hashes, so each build starts from an empty folder; it is built
// beside dist/ and swapped in, so dist/ is never seen half-written.
const staging = `dist.${process.pid}`;
await build({
  entryPoints: ['src/cli.ts'],
  outdir: staging,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3'],
  // CommonJS dependencies call require() for Node built-ins; ESM output needs one in scope.
  banner: { js: "import { createRequire as __hobRequire } from 'node:module'; const require = __hobRequire(import.meta.url);" },
  sourcemap: true,
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [zodEnglishOnly],
});
rmSync('dist', { recursive: true, force: true });
renameSync(staging, 'dist');
