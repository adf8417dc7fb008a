import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * `~` and `~/x` mean the home directory, as they would in a shell. Used by `target()`, which
 * has no workspace, so the permission layer sees `/home/me/.ssh` rather than `~/.ssh`.
 */
export function expandHome(toolPath: string, home: string = homedir()): string {
  if (toolPath === '~') return home;
  if (toolPath.startsWith('~/')) return path.join(home, toolPath.slice(2));
  return toolPath;
}

/** A tool's path argument as an absolute, normalised path: relative paths resolve against the workspace. */
export function resolveToolPath(workspace: string, toolPath: string | undefined): string {
  const expanded = expandHome(toolPath ?? '.');
  return path.resolve(workspace, expanded);
}

/**
 * How a path is shown back to the model: relative to the workspace when inside it (short, and
 * valid input for the next call), absolute otherwise.
 */
export function displayPath(workspace: string, absolutePath: string): string {
  const relative = path.relative(workspace, absolutePath);
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return absolutePath;
  return relative;
}

/** The permission target for a path argument; a missing path means "the workspace itself". */
export function pathTarget(toolPath: string | undefined): { path: string } {
  return { path: expandHome(toolPath ?? '.') };
}

/** Node's ENOENT and friends, narrowed without `any`. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * A fast secret check for the entries of a walk: each entry is checked as named and as it
 * really is, resolving each directory once (a link to ~/.aws in the middle of a path is seen)
 * instead of every entry.
 */
export function walkSecretCheck(isSensitivePath: ((path: string, resolved?: boolean) => boolean) | undefined): (entry: string) => boolean {
  if (!isSensitivePath) return () => false;
  const realDirs = new Map<string, string>();
  const realDir = (dir: string): string => {
    let real = realDirs.get(dir);
    if (real === undefined) {
      try {
        real = realpathSync(dir);
      } catch {
        real = dir;
      }
      realDirs.set(dir, real);
    }
    return real;
  };
  return (entry) => isSensitivePath(entry, true) || isSensitivePath(path.join(realDir(path.dirname(entry)), path.basename(entry)), true);
}
