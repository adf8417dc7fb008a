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
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** Directories whose whole content is secret (the directory itself counts, e.g. a grep root). */
const SECRET_DIRS = new Set(['.ssh', '.gnupg', '.azure', '.aws', '.password-store', '.mozilla', '.thunderbird', '.oci']);
/**
 * Secret directories or files recognised by consecutive segments, anywhere in a path
 * (lower case: matching is on the lower-cased path).
 */
const SECRET_SEQUENCES: string[][] = [
  '.config/gcloud',
  '.docker/config.json',
  '.kube/config',
  '.config/gh/hosts.yml',
  '.config/hub',
  '.config/git/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.terraform.d/credentials.tfrc.json',
  '.local/share/keyrings',
  '.local/share/fish/fish_history',
  '.config/rclone/rclone.conf',
  '.config/op',
  '.config/doctl',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  // Browser profiles (cookies, saved passwords), Linux and macOS.
  '.config/google-chrome',
  '.config/chromium',
  '.config/bravesoftware',
  '.config/microsoft-edge',
  '.config/vivaldi',
  '.config/opera',
  'library/keychains',
  'library/cookies',
  'library/application support/google/chrome',
  'library/application support/firefox',
  'library/application support/bravesoftware',
  'library/application support/microsoft edge',
  'library/safari',
].map((p) => p.split('/'));
/** Files that hold credentials (or typed secrets: shell histories) wherever they are. */
const SECRET_FILES = new Set([
  '.netrc',
  '_netrc',
  '.npmrc',
  '.pgpass',
  '.git-credentials',
  '.pypirc',
  '.vault-token',
  '.s3cfg',
  '.boto',
  '.my.cnf',
  '.bash_history',
  '.zsh_history',
  '.sh_history',
  '.history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.lesshst',
]);
/**
 * Every secret above as a path under the home directory, for the sandbox to mask and the
 * hard-link check to fingerprint (`~/.ssh`, `~/.config/gh/hosts.yml`, …).
 */
export const HOME_SECRETS: string[] = [
  ...SECRET_DIRS,
  ...SECRET_FILES,
  ...SECRET_SEQUENCES.map((segments) => segments.join('/')),
  // Spelled with their real case (macOS), for masking; matching ignores case anyway.
  '.config/BraveSoftware',
  'Library/Keychains',
  'Library/Cookies',
  'Library/Application Support/Google/Chrome',
  'Library/Application Support/Firefox',
  'Library/Safari',
];
/** Process files that carry a process's environment (hob's tokens) or memory: every pid, `self` too. */
const PROC_SECRETS = new Set(['environ', 'cmdline', 'mem', 'auxv']);
/** Private key files by name: `*.pem`, `id_rsa*`, `id_ed25519*`, `id_ecdsa*`, `id_dsa*`. */
const PRIVATE_KEY = /(\.pem$|^id_(rsa|ed25519|ecdsa|dsa)|^ssh_host_.*_key$)/;
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
    for (let i = 0; i < segments.length; i++) {
      if (SECRET_SEQUENCES.some((seq) => seq.every((s, j) => segments[i + j] === s))) return true;
    }
    if (segments[0] === 'proc' && segments.length >= 3 && PROC_SECRETS.has(segments[segments.length - 1] ?? '')) return true;
    if (SYSTEM_SECRETS.some((secret) => secret.every((s, i) => segments[i] === s))) return true;
    const name = basename(lower);
    const inWorkspace = workspaceForms.some((w) => isInside(lower, w.toLowerCase()));
    if (ENV_FILE.test(name) && !ENV_TEMPLATE.test(name) && !inWorkspace) return true;
    return protectedForms.some((p) => isInside(lower, p.toLowerCase()));
  }

  const identities = secretIdentities(home, [...SYSTEM_SECRETS.map((segments) => sep + segments.join(sep)), ...protectedForms]);

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
    if (identities.isLinkToSecret(target.real)) {
      return `${display(target.lexical)} is a hard link to a sensitive file and is always denied`;
    }
    return undefined;
  }

  function checkCommand(command: string): string | undefined {
    for (const word of commandWords(command)) {
      const target = resolveTarget(word);
      const hit = isSecretPath(target.lexical) ? target.lexical : isSecretPath(target.real) ? target.real : undefined;
      if (hit) return `the command touches ${display(hit)}, a sensitive path, and is always denied`;
      if (identities.isLinkToSecret(target.real)) {
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
      return isSecretPath(absolute) || identities.isLinkToSecret(absolute);
    }
    const target = resolveTarget(path);
    return isSecretPath(target.lexical) || isSecretPath(target.real) || identities.isLinkToSecret(target.real);
  }

  return { resolveTarget, check, checkCommand, isSensitive, display };
}

/** How long a fingerprint of the secret files is trusted before it is taken again. */
const IDENTITY_TTL_MS = 5000;
/** Bounds on the fingerprint walk, so a huge ~/.password-store cannot stall a check. */
const IDENTITY_MAX_ENTRIES = 5000;
const IDENTITY_MAX_DEPTH = 4;

/**
 * Hard links: a second name for a secret file has no telling segment, so files with more
 * than one link are compared by identity (device and inode) with every secret file hob
 * knows of. Only such files cost a look at the secrets (taken at most every 5 s), so
 * ordinary files pay one stat.
 */
function secretIdentities(home: string, extraPaths: string[]): { isLinkToSecret(absolute: string): boolean } {
  let taken = 0;
  let known = new Set<string>();
  const roots = () => [...HOME_SECRETS.map((p) => join(home, p)), ...extraPaths];

  function fingerprint(): Set<string> {
    const found = new Set<string>();
    let budget = IDENTITY_MAX_ENTRIES;
    const visit = (path: string, depth: number) => {
      if (budget-- <= 0) return;
      const stats = statSync(path, { throwIfNoEntry: false });
      if (!stats) return;
      if (stats.isFile()) found.add(`${stats.dev}:${stats.ino}`);
      else if (stats.isDirectory() && depth < IDENTITY_MAX_DEPTH) {
        let names: string[] = [];
        try {
          names = readdirSync(path);
        } catch {
          return; // unreadable: nothing hob could read through a link either
        }
        for (const name of names) visit(join(path, name), depth + 1);
      }
    };
    for (const root of roots()) {
      try {
        visit(root, 0);
      } catch {
        // a path that cannot be looked at holds nothing to compare
      }
    }
    return found;
  }

  return {
    isLinkToSecret(absolute) {
      let stats;
      try {
        stats = statSync(absolute, { throwIfNoEntry: false });
      } catch {
        return false;
      }
      if (!stats || !stats.isFile() || stats.nlink < 2) return false;
      const now = Date.now();
      if (now - taken > IDENTITY_TTL_MS) {
        known = fingerprint();
        taken = now;
      }
      return known.has(`${stats.dev}:${stats.ino}`);
    },
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
