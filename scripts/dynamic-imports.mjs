// Routes every `import()` of dist/ through `__hobI`. In a chunk's script form
// (scripts/script-form.mjs), which bin/code-cache.mjs runs, `__hobI` is the loader's: it runs
// the imported chunk's script form (a script has no `import()` of its own that could). Where
// node's own loader runs the ES modules (`--enable-source-maps`, HOB_CODE_CACHE=0, the
// PostgreSQL worker, a test that imports dist/cli.js), `__hobI` is the chunk's own `import()`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { init, parse } from 'es-module-lexer';

/** Defines `__hobI` at the top of each output file (after the banner's `require`). */
export const IMPORT_BANNER =
  "const __hobI = globalThis[Symbol.for('hob.import')]?.bind(null, import.meta.url) ?? ((specifier, options) => import(specifier, options));";

/**
 * Rewrites each `import(` in the .js files of `dir` as `__hobI(`: the same six letters before
 * the parenthesis, so every column, and the source maps with them, stays where it was. The
 * banner's own `import(` (the fallback) is left alone. Returns how many it rewrote.
 */
export async function routeDynamicImports(dir) {
  await init;
  let rewritten = 0;
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.js'))) {
    const path = join(dir, name);
    const source = readFileSync(path, 'utf8');
    const bannerEnd = source.indexOf(IMPORT_BANNER);
    if (bannerEnd < 0) throw new Error(`${path}: the banner that defines __hobI is missing (scripts/build.mjs's bundleOptions sets it)`);
    const after = bannerEnd + IMPORT_BANNER.length;
    const [imports] = parse(source, path);
    const starts = imports.filter((entry) => entry.d > -1 && entry.ss >= after).map((entry) => entry.ss);
    if (starts.length === 0) continue;
    let out = '';
    let from = 0;
    for (const start of starts) {
      if (source.slice(start, start + 6) !== 'import') throw new Error(`${path}:${start}: expected import( here, found ${JSON.stringify(source.slice(start, start + 12))}`);
      out += `${source.slice(from, start)}__hobI`;
      from = start + 6;
    }
    writeFileSync(path, out + source.slice(from));
    rewritten += starts.length;
  }
  return rewritten;
}
