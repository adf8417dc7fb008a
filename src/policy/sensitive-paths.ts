/**
 * Paths hob never touches, whatever the mode or the rules say: credentials, private keys,
 * system secrets and hob's own secrets (config file, database). Step 1 of the permission
 * checker; nothing overrides it.
 *
 * Matching is by path segment on the normalised, lower-cased absolute path, so `.ssh`
 * anywhere (another user's home, a copy in the workspace, `~/.SSH` on a case-insensitive
 * disk) is caught, while `notes/ssh-tips.md` is not. Each target is checked twice: as
 * written (after `~`/`$HOME` expansion and `..` normalisation) and with symlinks resolved,
 * so a workspace link pointing into ~/.ssh is denied too — even a dangling one, since
 * writing through it would create the secret.
 *
 * `.env` files: a `.env` inside the workspace is the project's own and follows the normal
 * rules (reading is allowed, writing asks); a `.env` anywhere else (another project, hob's
 * own directory) is sensitive. Templates (`.env.example`, `.env.sample`, `.env.template`)
 * are never sensitive.
 *
 * Directories that *contain* a secret (the home directory, `/`) are not denied as a whole:
 * tools that walk a tree should skip entries for which `isSensitive` says yes.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Directories whose whole content is secret (the directory itself counts, e.g. a grep root). */
const SECRET_DIRS = new Set(['.ssh', '.gnupg', '.azure', '.aws']);
/** Secret directories or files that are recognised by two consecutive segments. */
const SECRET_PAIRS: [string, string][] = [
  ['.config', 'gcloud'],
  ['.docker', 'config.json'],
  ['.kube', 'config'],
];
/** Files that hold credentials wherever they are. */
const SECRET_FILES = new Set(['.netrc', '_netrc', '.npmrc', '.pgpass', '.git-credentials']);
/** Private key files by name: `*.pem`, `id_rsa*`, `id_ed25519*`, `id_ecdsa*`, `id_dsa*`. */
const PRIVATE_KEY = /(\.pem$|^id_(rsa|ed25519|ecdsa|dsa))/;
/** System secrets, as segment lists from the root (macOS keeps /etc under /private). */
const SYSTEM_SECRETS = ['etc/shadow', 'etc/gshadow', 'etc/sudoers', 'etc/sudoers.d', 'etc/master.passwd'].flatMap(
  (p) => [p.split('/'), ['private', ...p.split('/')]],
);
const ENV_FILE = /^\.env(\..+)?$/;
const ENV_TEMPLATE = /^\.env\.(example|sample|template|dist)$/;

export type SensitivePathOptions = {
  workspace: string;
  home?: string;
  /** Extra files or directories to deny (hob's config file, its database, its data dir secrets). */
  protectedPaths?: string[];
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
};

export function createSensitivePaths(options: SensitivePathOptions): SensitivePaths {
  const home = resolve(options.home ?? homedir());
  const homeForms = forms(home);
  const workspace = resolve(options.workspace);
  const workspaceForms = forms(workspace);
  const protectedForms = (options.protectedPaths ?? []).flatMap((p) => forms(resolve(workspace, expandHome(p, home))));

  function forms(absolute: string): string[] {
    const real = realPath(absolute);
    return real === absolute ? [absolute] : [absolute, real];
  }

  function resolveTarget(path: string): ResolvedTarget {
    const lexical = resolve(workspace, expandHome(path.trim(), home));
    return { lexical, real: realPath(lexical) };
  }

  function isSecretPath(absolute: string): boolean {
    const lower = absolute.toLowerCase();
    const segments = lower.split(sep).filter(Boolean);
    if (segments.some((s) => SECRET_DIRS.has(s) || SECRET_FILES.has(s) || PRIVATE_KEY.test(s))) return true;
    for (let i = 0; i + 1 < segments.length; i++) {
      if (SECRET_PAIRS.some(([a, b]) => segments[i] === a && segments[i + 1] === b)) return true;
    }
    if (SYSTEM_SECRETS.some((secret) => secret.every((s, i) => segments[i] === s))) return true;
    const name = basename(lower);
    const inWorkspace = workspaceForms.some((w) => isInside(lower, w.toLowerCase()));
    if (ENV_FILE.test(name) && !ENV_TEMPLATE.test(name) && !inWorkspace) return true;
    return protectedForms.some((p) => isInside(lower, p.toLowerCase()));
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
    return undefined;
  }

  function checkCommand(command: string): string | undefined {
    for (const word of commandWords(command)) {
      const target = resolveTarget(word);
      const hit = isSecretPath(target.lexical) ? target.lexical : isSecretPath(target.real) ? target.real : undefined;
      if (hit) return `the command touches ${display(hit)}, a sensitive path, and is always denied`;
    }
    return undefined;
  }

  function isSensitive(path: string, resolved = false): boolean {
    if (resolved) return isSecretPath(resolve(path));
    const target = resolveTarget(path);
    return isSecretPath(target.lexical) || isSecretPath(target.real);
  }

  return { resolveTarget, check, checkCommand, isSensitive, display };
}

/** `~`, `~/x`, `$HOME/x`, `${HOME}/x` → absolute. `~user` is left alone (segment matching still sees `.ssh`). */
export function expandHome(path: string, home: string): string {
  if (path === '~' || path === '$HOME' || path === '${HOME}') return home;
  const match = /^(~|\$HOME|\$\{HOME\})\//.exec(path);
  return match ? join(home, path.slice(match[0].length)) : path;
}

/** True when `path` is `dir` or below it (segment boundary: /a/b is not inside /a/bc). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
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
