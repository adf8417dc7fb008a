// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. better-sqlite3 stays external (a native
// addon); channel SDKs sit in split chunks that load only when their channel is configured.
import { renameSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

// `node scripts/build.mjs [ENTRY OUTDIR]`: by default src/cli.ts into dist/; a benchmark builds
// its own entry the same way (bench/web.ts).
const [entry = 'src/cli.ts', outdir = 'dist'] = process.argv.slice(2);
// Chunk names carry content hashes, so each build starts from an empty folder; it is built
// beside the output folder and swapped in, so it is never seen half-written.
const staging = `${outdir}.${process.pid}`;
await build({
  entryPoints: [entry],
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
});
rmSync(outdir, { recursive: true, force: true });
renameSync(staging, outdir);
