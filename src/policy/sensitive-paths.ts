/**
 * Paths hob never touches, whatever the mode or the rules say: credentials, private keys,
 * system secrets and hob's own secrets (config file, database). Step 1 of the permission
 * checker; nothing overrides it.
 *
 * What counts as secret is `secret-names.ts` (one matcher for every check hob makes). Each
 * target is checked twice: as written (after `~`/`$HOME` expansion and `..` normalisation)
 * and with symlinks resolved, so a workspace link pointing into ~/.ssh is denied too — even
 * a dangling one, since writing through it would create the secret. A file with more than
 * one link is compared with the secrets found on disk (`secret-walk.ts`).
 *
 * `.env` files: a `.env` inside the workspace is the project's own and follows the normal
 * rules (reading is allowed, writing asks); a `.env` anywhere else (another project, hob's
 * own directory) is sensitive. Templates (`.env.example`, `.env.sample`, `.env.template`)
 * are never sensitive.
 *
 * Directories that *contain* a secret (the home directory, `/`) are not denied as a whole:
 * tools that walk a tree should skip entries for which `isSensitive` says yes.
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { HOME_SECRETS, isInside, secretMatcher, SYSTEM_SECRET_PATHS } from './secret-names.js';
import { createSecretIndex, type SecretIndex, type SecretWalkPlan, type WalkRoot } from './secret-walk.js';

export { isInside } from './secret-names.js';

export type SensitivePathOptions = {
  workspace: string;
  home?: string;
  /** Extra files or directories to deny (hob's config file, its database, its data dir secrets). */
  protectedPaths?: string[];
  /** How old the findings of the walk for secrets on disk may get before it is taken again (in the background); default 30 s. */
  rescanMs?: number;
};

export type ResolvedTarget = {
  /** As written, with `~`/`$HOME` expanded, resolved against the workspace and normalised. */
  lexical: string;
  /** With symlinks resolved on the longest existing prefix (dangling links followed). */
  real: string;
};

export type SensitivePaths = {
  /** Expands and normalises a path the way every policy check sees it. */
  resolveTarget(path: string): ResolvedTarget;
  /** A sentence for the person and the model when `path` is sensitive; undefined otherwise. */
  check(path: string): string | undefined;
  /** Best-effort scan of a shell command's words for sensitive paths (defence in depth, not a sandbox). */
  checkCommand(command: string): string | undefined;
  /** True when either form of the target is sensitive (for tools that walk directory trees). */
  /**
   * `resolved`: the path is absolute and already real (a walk that does not follow links,
   * under a real root): no file system calls, for checking thousands of entries quickly.
   */
  isSensitive(path: string, resolved?: boolean): boolean;
  /** `~/…` for paths under the home directory, for readable reasons. */
  display(absolutePath: string): string;
  /**
   * The secrets really on disk (under the home folder, the workspace and its parents), found
   * by a bounded walk: the hard-link check compares with them, the bash sandbox masks them.
   */
  onDisk: SecretIndex;
};

export function createSensitivePaths(options: SensitivePathOptions): SensitivePaths {
  const home = resolve(options.home ?? homedir());
  const homeForms = forms(home);
  const workspace = resolve(options.workspace);
  const protectedForms = (options.protectedPaths ?? []).flatMap((p) => forms(resolve(workspace, expandHome(p, home))));
  const isSecretPath = secretMatcher({ workspaces: forms(workspace), protectedPaths: protectedForms });
  const onDisk = createSecretIndex(() => walkPlan(home, workspace, protectedForms, isSecretPath), options.rescanMs);

  function forms(absolute: string): string[] {
    const real = realPath(absolute);
    return real === absolute ? [absolute] : [absolute, real];
  }

  function resolveTarget(path: string): ResolvedTarget {
    const lexical = resolve(workspace, expandHome(path.trim(), home));
    return { lexical, real: realPath(lexical) };
  }

  /**
   * Hard links: a second name for a secret file has no telling segment, so a file with more
   * than one link is compared by identity (device and inode) with every secret file found on
   * disk. Only such files cost a look at the findings, so ordinary files pay one stat.
   */
  function isLinkToSecret(absolute: string): boolean {
    let stats;
    try {
      stats = statSync(absolute, { throwIfNoEntry: false });
    } catch {
      return false;
    }
    if (!stats || !stats.isFile() || stats.nlink < 2) return false;
    return onDisk.latest().identities.has(`${stats.dev}:${stats.ino}`);
  }

  function display(absolutePath: string): string {
    for (const h of homeForms) {
      if (absolutePath === h) return '~';
      if (isInside(absolutePath, h)) return '~/' + relative(h, absolutePath);
    }
    return absolutePath;
  }

  function check(path: string): string | undefined {
    if (!path.trim()) return undefined;
    const target = resolveTarget(path);
    if (isSecretPath(target.lexical)) return `${display(target.lexical)} is a sensitive path and is always denied`;
    if (isSecretPath(target.real)) {
      return `${display(target.lexical)} resolves to ${display(target.real)}, a sensitive path, and is always denied`;
    }
    if (isLinkToSecret(target.real)) {
      return `${display(target.lexical)} is a hard link to a sensitive file and is always denied`;
    }
    return undefined;
  }

  function checkCommand(command: string): string | undefined {
    for (const word of commandWords(command)) {
      const target = resolveTarget(word);
      const hit = isSecretPath(target.lexical) ? target.lexical : isSecretPath(target.real) ? target.real : undefined;
      if (hit) return `the command touches ${display(hit)}, a sensitive path, and is always denied`;
      if (isLinkToSecret(target.real)) {
        return `the command touches ${display(target.lexical)}, a hard link to a sensitive file, and is always denied`;
      }
    }
    return showsEnvironments(command)
      ? 'the command would show other processes\' environments (ps e), which is always denied'
      : undefined;
  }

  function isSensitive(path: string, resolved = false): boolean {
    if (resolved) {
      const absolute = resolve(path);
      return isSecretPath(absolute) || isLinkToSecret(absolute);
    }
    const target = resolveTarget(path);
    return isSecretPath(target.lexical) || isSecretPath(target.real) || isLinkToSecret(target.real);
  }

  return { resolveTarget, check, checkCommand, isSensitive, display, onDisk };
}

/**
 * Where the secrets on disk are looked for: the workspace (also for hard links to secrets),
 * the home folder, and the workspace's parents up to the root (shallower: `/srv/app/.env`
 * next to `/srv/app/workspace`), plus the places every list names.
 */
function walkPlan(home: string, workspace: string, protectedPaths: string[], isSecret: (absolute: string) => boolean): SecretWalkPlan {
  const realHome = realPath(home);
  const realWorkspace = realPath(workspace);
  const parents: WalkRoot[] = [];
  for (let dir = dirname(realWorkspace); dir !== dirname(dir); dir = dirname(dir)) {
    if (!isInside(dir, realHome)) parents.push({ path: dir, maxDepth: 3, maxEntries: 2000 });
  }
  return {
    fixed: [...HOME_SECRETS.map((p) => join(home, p)), ...SYSTEM_SECRET_PATHS, ...protectedPaths],
    roots: [
      { path: realWorkspace, maxDepth: 6, maxEntries: 5000, findLinks: true },
      { path: realHome, maxDepth: 8, maxEntries: 20_000 },
      ...parents,
      { path: '/etc/ssh', maxDepth: 1, maxEntries: 200 },
    ],
    isSecret,
  };
}

/** `ps e`, `ps eww`, `ps axe`: BSD-style options with `e` print each process's environment. */
function showsEnvironments(command: string): boolean {
  for (const simple of command.split(/[;&|\n()`]+/)) {
    const words = simple.trim().replace(/["'\\]/g, '').split(/\s+/);
    // Also behind sudo, env, nice, …: every word that is `ps`.
    const at = words.findIndex((word) => basename(word) === 'ps');
    if (at < 0) continue;
    if (words.slice(at + 1).some((word) => /^[a-z]*e[a-z]*$/i.test(word) && !word.startsWith('-'))) return true;
  }
  return false;
}

/** `~`, `~/x`, `$HOME/x`, `${HOME}/x` → absolute. `~user` is left alone (segment matching still sees `.ssh`). */
export function expandHome(path: string, home: string): string {
  if (path === '~' || path === '$HOME' || path === '${HOME}') return home;
  const match = /^(~|\$HOME|\$\{HOME\})\//.exec(path);
  return match ? join(home, path.slice(match[0].length)) : path;
}

/**
 * Symlinks resolved on the longest existing prefix; a dangling link is followed by its
 * text, so a link to a file that does not exist yet (~/.ssh/authorized_keys) still counts.
 */
export function realPath(absolute: string, depth = 0): string {
  try {
    return realpathSync(absolute);
  } catch {
    // fall through: some part does not exist (or is a dangling link)
  }
  const parent = dirname(absolute);
  if (parent === absolute) return absolute;
  const candidate = join(realPath(parent, depth), basename(absolute));
  if (depth < 40) {
    try {
      if (lstatSync(candidate).isSymbolicLink()) {
        return realPath(resolve(dirname(candidate), readlinkSync(candidate)), depth + 1);
      }
    } catch {
      // does not exist at all: the lexical remainder is the answer
    }
  }
  return candidate;
}

/**
 * The words of a shell command that could name files: quotes and backslashes removed (so
 * `~/.s''sh` and `"$HOME"/.aws` are seen as written), split on whitespace, operators,
 * redirections and `=` (for `--file=~/.ssh/x`), flags skipped. Command substitution,
 * variables other than HOME, and encodings are not understood — this is not a sandbox.
 */
export function commandWords(command: string): string[] {
  return command
    .replace(/["'\\]/g, '')
    .split(/[\s;&|<>()`=,]+/)
    .filter((word) => word.length > 0 && !word.startsWith('-'));
}
