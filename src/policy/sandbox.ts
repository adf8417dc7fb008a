/**
 * The sandbox around `bash`: bubblewrap (`bwrap`), when it is installed and user namespaces
 * work. Inside it the whole file system is read-only except the workspace; `/tmp` is a
 * private, empty tmpfs; every secret found on disk by the secret matcher's bounded walk
 * (under the home folder, the workspace and its parents: keys, `.env` files, cloud
 * credentials, shell histories, browser profiles, `/etc/shadow`, hard links to any of them),
 * hob's own config, and its data_dir but the workspace, is masked — an empty tmpfs over a
 * directory, `/dev/null` over a file; a new PID namespace with its own `/proc`
 * hides hob's process (and its environment) and every other process; `--die-with-parent`
 * takes the whole sandbox down with hob. The network is shared unless
 * `permissions.sandbox.network` is false.
 *
 * Without bwrap (mode `auto`), `bash` runs as before and the path checks stay the only,
 * best-effort guard; mode `required` refuses `bash` instead.
 */
import { spawn, spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { isExecutableFile } from '../core/executable.js';
import { delimiter, join, resolve } from 'node:path';
import { isBelow } from './secret-names.js';
import { createSensitivePaths, type SensitivePaths } from './sensitive-paths.js';

export type SandboxMode = 'auto' | 'required' | 'off';
export type SandboxSettings = { mode: SandboxMode; network: boolean };

const INSTALL_HINT = 'install bubblewrap (apt-get install bubblewrap, or your distribution\'s "bubblewrap" package)';

export type SandboxOptions = {
  settings: SandboxSettings;
  workspace: string;
  home: string;
  /** hob's own secrets outside the home list: config files, the database, the logs directory. */
  hiddenPaths?: string[];
  /**
   * hob's data_dir: hidden whole (an empty tmpfs), except the workspace inside it, so what
   * other parts of hob keep there is out of sight too. Ignored when it holds the home directory.
   */
  dataDir?: string;
  /** Where to look for bwrap; default: PATH. Tests point it at a missing file. */
  bwrapPath?: string;
  /**
   * The secret matcher whose findings on disk are masked (the app shares its permission
   * checker's, so both walk once); default: one for `home`, `workspace` and `hiddenPaths`.
   */
  sensitive?: Pick<SensitivePaths, 'onDisk'>;
};

export type SandboxStatus =
  | { state: 'active'; bwrap: string }
  | { state: 'off' }
  /** auto without a working bwrap: bash runs unsandboxed. */
  | { state: 'unavailable'; reason: string }
  /** required without a working bwrap: bash is refused. */
  | { state: 'refused'; reason: string };

export type Sandbox = {
  /** Runs bwrap once the first time (blocking, tens of ms); `prepare` learns it without blocking. */
  status(): SandboxStatus;
  /** Learns the status with bwrap run as a child process, not blocking the event loop (`hob start` does this once its channels are up); later calls answer from it. */
  prepare(): Promise<SandboxStatus>;
  /** One line for `hob doctor` and the start-up log. */
  describe(): string;
  /**
   * The program and arguments that run `argv` (a program and its arguments); unchanged
   * when no sandbox is active; a sentence when bash must be refused. The first call waits
   * for the walk that finds the secrets to mask.
   */
  wrap(argv: string[]): Promise<{ file: string; args: string[]; sandboxed: boolean } | { refused: string }>;
};

/** What a probe depends on. */
type ProbeOptions = Pick<SandboxOptions, 'settings' | 'bwrapPath'>;

/**
 * Probes started before their sandbox is made, by mode and bwrap: `hob start` starts one while
 * its channels' handshakes wait on the network, and the sandbox its app makes then takes that
 * answer (run bwrap once, off the way to the first answer).
 */
const earlyProbes = new Map<string, Promise<SandboxStatus>>();
const probeKey = (options: ProbeOptions): string => `${options.settings.mode}\0${options.bwrapPath ?? ''}`;

/** Starts learning, in the background, what a sandbox with these settings will find (bwrap as a child process). */
export function probeSandboxEarly(options: ProbeOptions): void {
  const key = probeKey(options);
  if (!earlyProbes.has(key)) earlyProbes.set(key, probeInBackground(options));
}

export function createSandbox(options: SandboxOptions): Sandbox {
  let cached: SandboxStatus | undefined;
  let preparing: Promise<SandboxStatus> | undefined;
  const status = (): SandboxStatus => (cached ??= probe(options));
  const prepare = (): Promise<SandboxStatus> =>
    cached ? Promise.resolve(cached) : (preparing ??= (earlyProbes.get(probeKey(options)) ?? probeInBackground(options)).then((found) => (cached ??= found)));
  const sensitive = options.sensitive ?? createSensitivePaths({ workspace: options.workspace, home: options.home, protectedPaths: options.hiddenPaths ?? [] });

  return {
    status,
    prepare,
    describe() {
      const current = status();
      switch (current.state) {
        case 'active':
          return `active (${current.bwrap}; network ${options.settings.network ? 'on' : 'off'})`;
        case 'off':
          return 'off (permissions.sandbox: off): bash runs without a sandbox';
        case 'unavailable':
          return `not active: ${current.reason}; bash runs with best-effort path checks only — ${INSTALL_HINT}`;
        case 'refused':
          return `required but not available: ${current.reason}; bash is refused — ${INSTALL_HINT}`;
        default: {
          const unreachable: never = current;
          return unreachable;
        }
      }
    },
    async wrap(argv) {
      const current = await prepare();
      switch (current.state) {
        case 'active': {
          const found = await sensitive.onDisk.current();
          return { file: current.bwrap, args: [...bwrapArgs(options, found.paths), '--', ...argv], sandboxed: true };
        }
        case 'off':
        case 'unavailable':
          return { file: argv[0] ?? '/bin/bash', args: argv.slice(1), sandboxed: false };
        case 'refused':
          return {
            refused: `bash is refused: permissions.sandbox is "required" but ${current.reason}; ${INSTALL_HINT}.`,
          };
        default: {
          const unreachable: never = current;
          return unreachable;
        }
      }
    },
  };
}

/** Finds bwrap and runs it once, so a missing binary and disabled user namespaces both show. */
function probe(options: SandboxOptions): SandboxStatus {
  const found = findBwrap(options);
  if ('state' in found) return found;
  const run = spawnSync(found.bwrap, PROBE_ARGS, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env: {} });
  return probed(options, found.bwrap, run.status, run.stderr || run.error?.message);
}

/** As `probe`, with bwrap run as a child process the event loop does not wait on. */
async function probeInBackground(options: ProbeOptions): Promise<SandboxStatus> {
  const found = findBwrap(options);
  if ('state' in found) return found;
  const { bwrap } = found;
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(bwrap, PROBE_ARGS, { env: {}, stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (error) => resolve(probed(options, bwrap, null, error.message)));
    child.once('close', (code) => resolve(probed(options, bwrap, code, stderr)));
  });
}

const PROBE_ARGS = ['--ro-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--dev', '/dev', '--', '/bin/true'];
const PROBE_TIMEOUT_MS = 10_000;

function unusable(options: ProbeOptions, reason: string): SandboxStatus {
  return options.settings.mode === 'required' ? { state: 'refused', reason } : { state: 'unavailable', reason };
}

/** The status known without running bwrap, or the bwrap to run. */
function findBwrap(options: ProbeOptions): SandboxStatus | { bwrap: string } {
  if (options.settings.mode === 'off') return { state: 'off' };
  if (process.platform !== 'linux') return unusable(options, `bubblewrap needs Linux (this is ${process.platform})`);
  const bwrap = options.bwrapPath ?? findOnPath('bwrap');
  if (!bwrap || !isExecutableFile(bwrap)) return unusable(options, 'bwrap is not installed');
  return { bwrap };
}

/** What one run of bwrap says about the sandbox. */
function probed(options: ProbeOptions, bwrap: string, exitCode: number | null, stderr: string | undefined): SandboxStatus {
  if (exitCode === 0) return { state: 'active', bwrap };
  const why = (stderr || `exit ${exitCode}`).trim().split('\n')[0];
  return unusable(options, `bwrap cannot run here (${why}; user namespaces may be disabled)`);
}

function bwrapArgs(options: SandboxOptions, secrets: string[]): string[] {
  const workspace = realOrSelf(resolve(options.workspace));
  const dataDir = hiddenDataDir(options);
  const args = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    ...(dataDir ? ['--tmpfs', dataDir] : []),
    '--bind', workspace, workspace,
    '--unshare-pid',
    '--unshare-ipc',
    '--die-with-parent',
    '--chdir', workspace,
  ];
  if (!options.settings.network) args.push('--unshare-net');
  // The home directory is read-only: caches that tools keep there go to the private /tmp.
  args.push('--setenv', 'XDG_CACHE_HOME', '/tmp/.cache', '--setenv', 'npm_config_cache', '/tmp/.npm', '--setenv', 'PIP_CACHE_DIR', '/tmp/.cache/pip');
  for (const path of maskedPaths(options, secrets)) {
    if (dataDir && isBelow(path, dataDir) && !isBelow(path, workspace)) continue; // hidden with the data dir
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) continue;
    if (stats.isDirectory()) args.push('--tmpfs', path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  return args;
}

/** The secrets to hide, as real paths, each once: what the walk found and hob's own files. */
function maskedPaths(options: Pick<SandboxOptions, 'hiddenPaths' | 'workspace'>, secrets: string[]): string[] {
  const workspace = realOrSelf(resolve(options.workspace));
  const wanted = [...secrets, ...(options.hiddenPaths ?? [])];
  const seen = new Set<string>();
  for (const path of wanted) {
    const real = realOrSelf(resolve(path));
    // Masks under /tmp would only re-create what the private /tmp already hides.
    if ((real === '/tmp' || real.startsWith('/tmp/')) && !real.startsWith(`${workspace}/`)) continue;
    seen.add(real);
  }
  return [...seen];
}

/** The data dir to hide whole, if that is safe: it must exist and not hold the home directory or the root. */
function hiddenDataDir(options: SandboxOptions): string | undefined {
  if (!options.dataDir) return undefined;
  const dataDir = realOrSelf(resolve(options.dataDir));
  const home = realOrSelf(resolve(options.home));
  if (dataDir === '/' || isBelow(home, dataDir) || isBelow(dataDir, '/tmp')) return undefined;
  return statSync(dataDir, { throwIfNoEntry: false })?.isDirectory() ? dataDir : undefined;
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

