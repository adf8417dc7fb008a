import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { tempDir } from './temp-dirs.js';

const require = createRequire(import.meta.url);

/**
 * Bundles a TypeScript helper that a test runs as a child process (one entry and the hob code
 * it imports) into a single .mjs in a temp folder, for `node <file>`. A child started with
 * `--import tsx` instead pays for the TypeScript loader and for compiling every source file it
 * reaches, about a second of CPU per child; bundling once costs a tenth of that, and each
 * child then starts as quickly as plain node. better-sqlite3 (a native addon) is left out of
 * the bundle and imported from this checkout's node_modules by its absolute path.
 */
export async function bundleChild(entry: string): Promise<string> {
  const outfile = join(tempDir('hob-child-'), basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // CommonJS dependencies call require() for Node built-ins; ESM output needs one in scope.
    banner: { js: "import { createRequire as __childRequire } from 'node:module'; const require = __childRequire(import.meta.url);" },
    logLevel: 'warning',
    plugins: [
      {
        name: 'native-addons-from-checkout',
        setup(builder) {
          builder.onResolve({ filter: /^better-sqlite3$/ }, (args) => ({ path: require.resolve(args.path), external: true }));
        },
      },
    ],
  });
  return outfile;
}
