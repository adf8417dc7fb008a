#!/usr/bin/env -S node --max-semi-space-size=8
// Starts the bundled CLI. In a source checkout (src/ beside dist/), a dist/ that is missing
// or older than the sources (after `npm install --ignore-scripts` or a `git pull`) is built
// first; when that cannot be done, one line says what to run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli.js');

function newestSource() {
  let newest = 0;
  for (const dir of ['src', 'adapters']) {
    const base = join(root, dir);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base, { recursive: true })) {
      const mtime = statSync(join(base, String(name)), { throwIfNoEntry: false })?.mtimeMs ?? 0;
      if (mtime > newest) newest = mtime;
    }
  }
  return newest;
}

function staleReason() {
  const built = statSync(cli, { throwIfNoEntry: false });
  if (!built) return 'dist/ is missing (hob is not built yet)';
  if (newestSource() > built.mtimeMs) return 'dist/ is older than src/';
  return undefined;
}

const reason = staleReason();
if (reason) {
  const script = join(root, 'scripts', 'build.mjs');
  const build = existsSync(script) ? spawnSync(process.execPath, [script], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] }) : undefined;
  if (build?.status !== 0 || !existsSync(cli)) {
    process.stderr.write(`hob: ${reason}; run "npm install && npm run build" in ${root}, then try again.\n`);
    process.exit(1);
  }
}
await import(pathToFileURL(cli).href);
