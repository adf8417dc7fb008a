// Bundles src/ and its dependencies into dist/ with esbuild (well under a second): node then
// starts hob without a TypeScript loader and without resolving hundreds of package files,
// which takes about a third off `hob ask`'s start. better-sqlite3 stays external (a native
// addon); channel SDKs sit in split chunks that load only when their channel is configured.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

// Chunk names carry content hashes: start clean so old chunks do not pile up.
rmSync('dist', { recursive: true, force: true });

await build({
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
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
