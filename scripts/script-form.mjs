// Writes each ES module of dist/ a second time, as a script, in dist/script/: what
// bin/code-cache.mjs runs. Node 20 can keep V8's compiled code between starts only as a code
// cache, and a module's cache can be made only before the module runs: it then holds the top
// levels and none of the functions a start calls, which V8 compiled again at every start
// (a fifth of the main thread's time until `hob start`'s first answers). A script's cache is
// made after it ran, with every function it ran. esbuild turns each chunk's `import`s into
// `require()`s of the chunks it names and its `export`s into getters (live, as a module's
// bindings are), and `import.meta` into `__hobMeta`; the loader hands each script `require`,
// `module`, `__hobMeta` and `__hobI` (scripts/dynamic-imports.mjs). Node's own loader still
// runs the ES modules (with `--enable-source-maps`, the PostgreSQL worker, `node dist/cli.js`).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transform } from 'esbuild';

/** Where the scripts go, inside dist/. */
export const SCRIPT_DIR = 'script';

/**
 * Each script's first line: it is one function, of what bin/code-cache.mjs hands it, strict as
 * the module was.
 */
export const SCRIPT_HEAD = "(function (exports, require, module, __hobMeta, __hobI) {'use strict';";

/**
 * Writes `dir/script/NAME.js` (and its source map, through the module's own back to src/) for
 * each `NAME.js` of `dir` that begins with `banner` (scripts/build.mjs's), which the script
 * form leaves out: the loader provides what it defines. A chunk that awaits at its top level
 * cannot be a script; the build then fails naming it.
 */
export async function writeScriptForms(dir, banner) {
  const out = join(dir, SCRIPT_DIR);
  mkdirSync(out, { recursive: true });
  const names = readdirSync(dir).filter((name) => name.endsWith('.js'));
  await Promise.all(names.map(async (name) => {
    const path = join(dir, name);
    // A shebang (cli.js's) goes too. Each line left out stays as an empty one, so the module's
    // source map still finds every line where it was.
    const module = readFileSync(path, 'utf8');
    const shebang = module.startsWith('#!');
    const source = shebang ? module.slice(module.indexOf('\n') + 1) : module;
    if (!source.startsWith(`${banner}\n`)) throw new Error(`${path}: the banner is missing (scripts/build.mjs's bundleOptions sets it)`);
    const body = `${shebang ? '\n\n' : '\n'}${source.slice(banner.length + 1).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '')}`;
    // The module's map, inlined so esbuild maps the script through it.
    const map = readOptional(`${path}.map`);
    const input = map ? `${body}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(map).toString('base64')}\n` : body;
    let result;
    try {
      result = await transform(input, {
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        loader: 'js',
        define: { 'import.meta.url': '__hobMeta.url', 'import.meta.dirname': '__hobMeta.dirname', 'import.meta.filename': '__hobMeta.filename', 'import.meta': '__hobMeta' },
        minifyWhitespace: true,
        sourcemap: map ? 'external' : false,
        sourcefile: name,
        logLevel: 'silent',
      });
    } catch (error) {
      const awaits = String(error?.message).includes('Top-level await');
      throw new Error(`${path}: ${awaits ? 'awaits at its top level, which a script cannot (bin/code-cache.mjs runs dist/ as scripts): move the await into a function' : error?.message}`);
    }
    // The file is the function the loader calls, so the loader compiles the file's text as it is:
    // wrapped there, a second copy of each chunk's text stayed in memory until V8's first full
    // collection (~0.8 MB more RSS when three channels were up). Its map moves a line down.
    const script = `${SCRIPT_HEAD}\n${oneGetterDeep(result.code)}})\n`;
    writeFileSync(join(out, name), map ? `${script}//# sourceMappingURL=${name}.map\n` : script);
    if (map) writeFileSync(join(out, `${name}.map`), shiftedOneLine(result.map));
  }));
  return names.length;
}

/**
 * esbuild's CommonJS form hands out a copy of the chunk's exports whose every getter calls the
 * original's getter: each use of another chunk's function went through two calls. The original
 * is handed out instead, padded to the same length so every column, and the source map with
 * them, stays where it was (the loader marks it as an ES module's exports once the chunk ran).
 * Unchanged when the chunk exports nothing.
 */
function oneGetterDeep(code) {
  const exported = /\bmodule\.exports=__toCommonJS\((\w+_exports)\);/g;
  if ([...code.matchAll(exported)].length !== 1) return code;
  return code.replace(exported, (whole, name) => `module.exports=${name};`.padEnd(whole.length, ' '));
}

/** A source map for the same code one line further down (`;` starts a line in its mappings). */
function shiftedOneLine(map) {
  const parsed = JSON.parse(map);
  parsed.mappings = `;${parsed.mappings}`;
  return JSON.stringify(parsed);
}

function readOptional(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
