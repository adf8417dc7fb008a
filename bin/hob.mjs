#!/usr/bin/env -S node --max-semi-space-size=8
// Starts the bundled CLI. In a source checkout (src/ beside dist/), a dist/ that is missing
// or older than the sources or the build script (after `npm install --ignore-scripts`, a
// `git pull` or an edit) is built first; when that cannot be done, one line says what to run.
// dist/ runs through code-cache.mjs, which keeps what V8 compiled between starts in
// dist/.code-cache (or HOB_CODE_CACHE_DIR); with `--enable-source-maps` or with
// HOB_CODE_CACHE=0, dist/ loads as node loads it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'cli.js');

/**
 * The newest modification time of `dir`, and of everything below it (0 when it is not there).
 * Walked by hand, a readdir and a stat per directory and a stat per file: node 20's
 * `readdirSync(dir, { recursive: true })` took ~20 ms of each start for hob's ~400 files, this
 * ~10. A file edited in place changes only its own time, one added, deleted or renamed (as
 * `git pull` does) its directory's.
 */
function newestIn(dir) {
  let newest = statSync(dir, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (newest === 0) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    const mtime = entry.isDirectory() ? newestIn(path) : (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

function staleReason() {
  const built = statSync(cli, { throwIfNoEntry: false });
  if (!built) return 'dist/ is missing (hob is not built yet)';
  // scripts/ holds how dist/ is bundled (which parts of a library load at start): a change there
  // builds again too.
  const newest = Math.max(newestIn(join(root, 'src')), newestIn(join(root, 'adapters')), newestIn(join(root, 'scripts')));
  if (newest > built.mtimeMs) return 'dist/ is older than src/';
  return undefined;
}

const reason = staleReason();
if (reason) {
  // Loaded only here: node's child_process module is not compiled for a start that needs no build.
  const { spawnSync } = await import('node:child_process');
  const script = join(root, 'scripts', 'build.mjs');
  const build = existsSync(script) ? spawnSync(process.execPath, [script], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] }) : undefined;
  if (build?.status !== 0 || !existsSync(cli)) {
    process.stderr.write(`hob: ${reason}; run "npm install && npm run build" in ${root}, then try again.\n`);
    process.exit(1);
  }
}
const { canCache, importWithCodeCache } = await import('./code-cache.mjs');
if (canCache() && process.env.HOB_CODE_CACHE !== '0') await importWithCodeCache(cli, process.env.HOB_CODE_CACHE_DIR || join(root, 'dist', '.code-cache'));
else await import(pathToFileURL(cli).href);
