// Bundles src/ into dist/ with esbuild (about 100 ms): node then starts hob without a
// TypeScript loader. Dependencies stay external; channel SDKs load lazily via split chunks.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
