/**
 * What a secret looks like: the one list behind every check hob makes (the file tools' path
 * check, the hard-link check, MCP arguments, the bash sandbox's masks). Matching is by path
 * segment on the lower-cased absolute path, so `.ssh` anywhere (another user's home, an old
 * laptop's copy, `~/.SSH` — a different folder on Linux, the same one on a case-insensitive
 * disk) is caught, while `notes/ssh-tips.md` is not.
 */
import { isAbsolute, relative, sep } from 'node:path';

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
 * The secrets above as paths under the home directory: places the sandbox and the hard-link
 * check always look at, whatever the walk of the home directory reaches.
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
/**
 * Private keys and key or password stores by name: `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`,
 * `*.keystore`, `*.kdbx`, `id_rsa*`, `id_ed25519*`, `id_ecdsa*`, `id_dsa*`, `ssh_host_*_key`.
 */
const PRIVATE_KEY = /(\.(pem|key|p12|pfx|jks|keystore|kdbx)$|^id_(rsa|ed25519|ecdsa|dsa)|^ssh_host_.*_key$)/;
/** System secrets (with their backups, `/etc/shadow-`), from the root; macOS keeps /etc under /private. */
export const SYSTEM_SECRET_PATHS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d', '/etc/master.passwd'];
const SYSTEM_SECRETS = SYSTEM_SECRET_PATHS.map((p) => p.slice(1).split('/')).flatMap((p) => [p, ['private', ...p]]);
/** `.env`, `.env.production`, `.env-local`, `.envrc`: every `.env*` but the templates. */
const ENV_FILE = /^\.env(rc|[._-].*)?$/;
const ENV_TEMPLATE = /^\.env\.(example|sample|template|dist)$/;

export type SecretMatcherOptions = {
  /** The workspace's forms (as written and real): a `.env` inside it is the project's own. */
  workspaces: string[];
  /** hob's own secrets (config files, database, logs), each as written and real. */
  protectedPaths: string[];
};

/**
 * True when an absolute, normalised path is a secret or inside one. Case-insensitive
 * throughout: on Linux `~/.SSH/id_rsa` is another file than `~/.ssh/id_rsa`, but it is a
 * key all the same, and on a case-insensitive disk it is the same file.
 */
export function secretMatcher(options: SecretMatcherOptions): (absolute: string) => boolean {
  const workspaces = options.workspaces.map((w) => w.toLowerCase());
  const protectedPaths = options.protectedPaths.map((p) => p.toLowerCase());
  // Walks ask this for every entry they meet: plain string work, no path module calls.
  return (absolute) => {
    const lower = absolute.toLowerCase();
    const segments = lower.split(sep).filter(Boolean);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as string;
      if (SECRET_DIRS.has(segment) || SECRET_FILES.has(segment) || PRIVATE_KEY.test(segment)) return true;
      for (const sequence of SEQUENCES_BY_HEAD.get(segment) ?? []) {
        if (sequence.every((s, j) => segments[i + j] === s)) return true;
      }
    }
    if (segments[0] === 'proc' && segments.length >= 3 && PROC_SECRETS.has(segments[segments.length - 1] ?? '')) return true;
    if ((segments[0] === 'etc' || segments[0] === 'private') && SYSTEM_SECRETS.some((secret) => secret.every((s, i) => segments[i] === s))) return true;
    const name = segments[segments.length - 1] ?? '';
    if (ENV_FILE.test(name) && !ENV_TEMPLATE.test(name) && !workspaces.some((w) => isBelow(lower, w))) return true;
    return protectedPaths.some((p) => isBelow(lower, p));
  };
}

/** The sequences by their first segment, so a path's segments are matched against few. */
const SEQUENCES_BY_HEAD = new Map<string, string[][]>();
for (const sequence of SECRET_SEQUENCES) {
  const head = sequence[0] as string;
  SEQUENCES_BY_HEAD.set(head, [...(SEQUENCES_BY_HEAD.get(head) ?? []), sequence]);
}

/** `isInside` for normalised absolute paths, by string (no path module calls): `path` is `dir` or below it. */
export function isBelow(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** True when `path` is `dir` or below it (segment boundary: /a/b is not inside /a/bc). */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
