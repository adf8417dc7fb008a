import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What dist/ is bundled from: hob's code, the build script and the installed packages. */
const INPUTS = ['src', 'adapters', 'scripts', 'package.json', 'package-lock.json'];
/** Written into dist/ after a build: the newest input's mtime that build saw. */
const STAMP = join('dist', '.inputs-mtime');
/** Longer than a bundling takes even on a loaded machine (about a second when quiet). */
const BUILD_TAKES_AT_MOST_MS = 60_000;

/** The newest mtime among the inputs, folders included (a deleted file changes its folder's). */
function newestInput(root: string): number {
  let newest = 0;
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    const stats = statSync(path);
    newest = Math.max(newest, stats.mtimeMs);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  for (const input of INPUTS) visit(join(root, input));
  return newest;
}

/**
 * Builds dist/ (the bundled CLI that process-level tests spawn) unless it was built from the
 * inputs as they are now: a rerun of the tests with no code changed skips the bundling. The
 * mtimes are read before the build, so a file saved while it runs makes the next run build.
 */
export function ensureBuiltDist(root: string): void {
  const newest = newestInput(root);
  const stamp = join(root, STAMP);
  if (existsSync(join(root, 'dist', 'cli.js'))) {
    if (existsSync(stamp) && Number(readFileSync(stamp, 'utf8')) === newest) return;
    // Built by `npm run build` or `npm ci` (its prepare script), which write no stamp: dist/ is
    // made new at the end of a build, so inputs older than it by more than a build can take were
    // all read by that build. Inputs changed closer to it (or no birth time: 0) build again.
    if (!existsSync(stamp) && statSync(join(root, 'dist')).birthtimeMs - BUILD_TAKES_AT_MOST_MS > newest) {
      writeFileSync(stamp, String(newest));
      return;
    }
  }
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  writeFileSync(stamp, String(newest));
}
