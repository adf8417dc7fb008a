/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb`'s output (made once, kept
 * in node_modules/.cache) copied into a temp folder, `pg_ctl start` on 127.0.0.1 and a free port, password logins only (scram-sha-256, no trust),
 * the server running as the `postgres` OS user when the run is root (PostgreSQL refuses root,
 * and it should), stopped and removed at the end.
 *
 * In a test run, the first test file that asks starts the run's one cluster (the others wait
 * for it) and each file gets a fresh database of its own; test/global-setup.ts stops it after
 * the run. Without PostgreSQL installed, `postgresSkipReason` says why the tests skip.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chownSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import pg from 'pg';
import type { PostgresBridge } from '../../src/store/postgres/bridge.js';
import { procCpu } from './file-cpu.js';

/** Where the run's shared cluster is coordinated (set by test/global-setup.ts). */
export const SHARED_DIR_ENV = 'HOB_TEST_POSTGRES_DIR';
const ADMIN = 'hob_admin';
/** The role hob connects as: owns its databases, is no superuser (as the README sets it up). */
const ROLE = 'hob';

export type Cluster = {
  host: string;
  port: number;
  adminPassword: string;
  rolePassword: string;
  /** The folder holding the data directory, the socket and the log. */
  dir: string;
};

type Binaries = { bin: string; runAs: { uid: number; gid: number } | undefined };

/**
 * In a test run, bridges started from source load the worker test/global-setup.ts has just
 * bundled into dist/ from these very sources (src/store/postgres/worker-from-source.mjs),
 * instead of loading tsx in every worker thread: about half a second of CPU per bridge.
 */
const bundledWorker = join(import.meta.dirname, '..', '..', 'dist', 'postgres-worker.js');
if (process.env[SHARED_DIR_ENV] && existsSync(bundledWorker)) process.env.HOB_POSTGRES_WORKER ??= bundledWorker;

const found = findBinaries();

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export const postgresSkipReason: string | undefined = 'missing' in found ? found.missing : undefined;

function findBinaries(): Binaries | { missing: string } {
  const candidates = [process.env.HOB_PG_BIN, ...installedVersions().map((version) => `/usr/lib/postgresql/${version}/bin`)].filter((dir): dir is string => Boolean(dir));
  const bin = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  if (!bin) return { missing: 'PostgreSQL is not installed here (no initdb in /usr/lib/postgresql/*/bin; set HOB_PG_BIN or install the postgresql package, as .ci/run does)' };
  if (process.getuid?.() !== 0) return { bin, runAs: undefined };
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { bin, runAs: { uid, gid } };
  } catch {
    return { missing: 'the tests run as root and there is no `postgres` user to run the server as (PostgreSQL refuses to run as root)' };
  }
}

function installedVersions(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  } catch {
    return [];
  }
}

function binaries(): Binaries {
  if ('missing' in found) throw new Error(found.missing);
  return found;
}

/** Runs a PostgreSQL program, as the `postgres` user when we are root. */
function runTool(tool: string, args: string[]): string {
  const { bin, runAs } = binaries();
  const [command, argv] = runAs ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  return execFileSync(command, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * initdb's output, kept between runs in node_modules/.cache: initdb costs about 2 s of CPU and,
 * on a loaded machine, most of a cluster's start, where a copy costs a fraction of that. Made
 * once per PostgreSQL version from a run's fresh data directory (copied to a staging folder,
 * renamed into place, so two runs making it at once both end with a whole one). Only this
 * process reads the cache; the server never sees it. Returns the admin password of `data`.
 */
function initializedData(dir: string, data: string): string {
  const { bin, runAs } = binaries();
  const cache = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', `hob-test-postgres-${basename(dirname(bin))}`);
  if (existsSync(join(cache, 'data', 'PG_VERSION'))) {
    // -a keeps the owner (the `postgres` user) and the modes PostgreSQL insists on.
    execFileSync('cp', ['-a', join(cache, 'data'), data]);
    return readFileSync(join(cache, 'admin-password'), 'utf8').trim();
  }
  const password = randomBytes(12).toString('hex');
  const passwordFile = join(dir, 'admin-password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  runTool('initdb', ['-D', data, '-U', ADMIN, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  rmSync(passwordFile);
  const staging = `${cache}.${process.pid}.${randomBytes(3).toString('hex')}`;
  try {
    mkdirSync(dirname(cache), { recursive: true });
    mkdirSync(staging, { mode: 0o700 });
    execFileSync('cp', ['-a', data, join(staging, 'data')]);
    writeFileSync(join(staging, 'admin-password'), password, { mode: 0o600 });
    renameSync(staging, cache);
  } catch {
    // Another run put its copy in place first, or there is no cache to write: this run has its data.
    rmSync(staging, { recursive: true, force: true });
  }
  return password;
}

/**
 * The shared test cluster's own settings: no autovacuum. Its databases live for one test file
 * and hold a few rows; the launcher would still visit each of them every minute, a process a
 * visit. No JIT either: a statement the planner costs high would load LLVM into its backend
 * and compile for a table of a few rows. (Benchmarks keep both: their large tables need the
 * statistics autovacuum gathers, and their figures are for the server as people run it.)
 */
const TEST_RUN_SETTINGS = ['-c autovacuum=off -c jit=off'];

/**
 * Where a test run keeps its throwaway files: in memory (/dev/shm) when that has room, else
 * the temp folder. The run's temp folder (test/global-setup.ts) and its cluster live there:
 * their data is thrown away after the run, and on a disk the run's last act, removing the
 * ~370 files of each database (one per PostgreSQL test file), took seconds of system time
 * after the last test (ext4 mounted with `discard`).
 */
export function runClusterBase(): string {
  const shm = '/dev/shm';
  try {
    const { bavail, bsize } = statfsSync(shm);
    accessSync(shm, constants.W_OK);
    if (bavail * bsize >= 2 ** 30) return shm;
  } catch {
    // No /dev/shm here (not Linux): the temp folder.
  }
  return tmpdir();
}

/**
 * Starts a new cluster and its `hob` role. Call `stopCluster` when done. `inMemory`: its files
 * in /dev/shm when there is room (a test run's; benchmarks keep theirs on disk, as people do).
 */
export async function startCluster({ onFolder, settings = [], inMemory = false }: { onFolder?: (dir: string) => void; settings?: string[]; inMemory?: boolean } = {}): Promise<Cluster> {
  const { runAs } = binaries();
  const dir = mkdtempSync(join(inMemory ? runClusterBase() : tmpdir(), 'hob-pg-'));
  onFolder?.(dir);
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const adminPassword = randomBytes(12).toString('hex');
  const rolePassword = randomBytes(12).toString('hex');
  const data = join(dir, 'data');
  const initialPassword = initializedData(dir, data);
  const log = join(dir, 'server.log');
  let lastError: unknown;
  // A free port can be taken between asking and starting: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const options = [`-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`, ...settings].join(' ');
    try {
      runTool('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
    } catch (error) {
      lastError = error;
      continue;
    }
    const cluster = { host: '127.0.0.1', port, adminPassword, rolePassword, dir };
    // The copied data's admin password is the same in every run: this run gets its own.
    await withAdmin({ ...cluster, adminPassword: initialPassword }, 'postgres', (client) => client.query(`ALTER ROLE ${ADMIN} PASSWORD '${adminPassword}'`));
    await withAdmin(cluster, 'postgres', (client) => client.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${rolePassword}'`));
    return cluster;
  }
  const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-10).join('\n') : '';
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`PostgreSQL did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}\n${tail}`);
}

/** Stops the server at once (the data is thrown away) and removes its folder; `quiet`: it may not be running. */
export function stopCluster(cluster: Pick<Cluster, 'dir'>, { quiet = false } = {}): void {
  try {
    runTool('pg_ctl', ['-D', join(cluster.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
  } catch (error) {
    if (!quiet) throw error;
  } finally {
    rmSync(cluster.dir, { recursive: true, force: true });
  }
}

async function withAdmin<T>(cluster: Cluster, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: cluster.host, port: cluster.port, user: ADMIN, password: cluster.adminPassword, database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new, empty database owned by the `hob` role; returns the URL hob would be given as store.url.
 * Copied from the template as files (FILE_COPY) rather than page by page through the WAL,
 * PostgreSQL 15's default: on a cluster without fsync, 15 databases cost the server 1.25–1.8 s
 * of CPU (its checkpoints included) instead of 1.5–2.8 s, and a test run makes one per file.
 */
export async function createDatabase(cluster: Cluster): Promise<string> {
  const name = `hob_${randomBytes(6).toString('hex')}`;
  const strategy = serverMajor(cluster) >= 15 ? ' STRATEGY = FILE_COPY' : '';
  await withAdmin(cluster, 'postgres', (client) => client.query(`CREATE DATABASE ${name} OWNER ${ROLE}${strategy}`));
  return `postgres://${ROLE}:${cluster.rolePassword}@${cluster.host}:${cluster.port}/${name}`;
}

/** The server's major version, from its data directory (STRATEGY came with 15). */
function serverMajor(cluster: Pick<Cluster, 'dir'>): number {
  try {
    return Number(readFileSync(join(cluster.dir, 'data', 'PG_VERSION'), 'utf8').trim());
  } catch {
    return 0;
  }
}

/** Runs statements as the cluster's superuser in one database (tests that set up what hob may not). */
export async function asAdmin(cluster: Cluster, url: string, sql: string): Promise<void> {
  await withAdmin(cluster, new URL(url).pathname.slice(1), (client) => client.query(sql));
}

/**
 * The run's shared cluster: the first test file to ask starts it (holding a lock file), the
 * others wait for its details. Outside a vitest run (no shared folder) each process starts
 * its own and stops it on exit.
 */
export async function sharedCluster(): Promise<Cluster> {
  const shared = process.env[SHARED_DIR_ENV];
  if (!shared) return privateCluster();
  const info = join(shared, 'cluster.json');
  const failed = join(shared, 'failed.txt');
  const starting = join(shared, 'starting.txt');
  let starter = false;
  try {
    closeSync(openSync(join(shared, 'lock'), 'wx'));
    starter = true;
  } catch {
    // Another test file is starting it.
  }
  if (starter) {
    try {
      const cluster = await startCluster({ onFolder: (dir) => writeFileSync(starting, dir), settings: TEST_RUN_SETTINGS, inMemory: true });
      try {
        writeFileSync(`${info}.tmp`, JSON.stringify(cluster));
        renameSync(`${info}.tmp`, info);
      } catch (error) {
        // The run ended while the server started (its folder is gone): nobody else would stop it.
        stopCluster(cluster);
        throw error;
      }
      return cluster;
    } catch (error) {
      writeFileSync(failed, error instanceof Error ? error.message : String(error));
      throw error;
    }
  }
  for (let waited = 0; waited < 120_000; waited += 100) {
    if (existsSync(info)) return JSON.parse(readFileSync(info, 'utf8')) as Cluster;
    if (existsSync(failed)) throw new Error(`The test cluster did not start: ${readFileSync(failed, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('The test cluster did not start within 2 minutes.');
}

let own: Promise<Cluster> | undefined;
function privateCluster(): Promise<Cluster> {
  own ??= startCluster({ settings: TEST_RUN_SETTINGS, inMemory: true }).then((cluster) => {
    process.once('exit', () => stopCluster(cluster));
    return cluster;
  });
  return own;
}

/**
 * After the run (test/global-setup.ts): stops the shared cluster if a test started one, also
 * one still starting (its test gave up waiting): removing its folder keeps it from coming up.
 */
export function stopSharedCluster(shared: string): { serverCpuSeconds?: number } {
  const info = join(shared, 'cluster.json');
  const starting = join(shared, 'starting.txt');
  try {
    if (existsSync(info)) {
      const cluster = JSON.parse(readFileSync(info, 'utf8')) as Cluster;
      const serverCpuSeconds = serverCpu(cluster.dir);
      stopCluster(cluster);
      return { serverCpuSeconds };
    }
    if (existsSync(starting)) stopCluster({ dir: readFileSync(starting, 'utf8') }, { quiet: true });
    return {};
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
}

/**
 * The CPU seconds the server used so far: the postmaster's own and its exited backends' (it
 * reaps them). pg_ctl starts it detached, so no test process counts it; Linux only.
 */
function serverCpu(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const cpu = procCpu(pid);
    return cpu && cpu.user + cpu.system + cpu.childrenUser + cpu.childrenSystem;
  } catch {
    return undefined;
  }
}

/** A fresh database for this test file, on the run's cluster. */
export async function testDatabase(): Promise<{ url: string; cluster: Cluster }> {
  const cluster = await sharedCluster();
  return { url: await createDatabase(cluster), cluster };
}

/**
 * Bundles `entries` (name → source file) with the PostgreSQL worker beside them, as dist/ is
 * built (scripts/build.mjs), into a temp folder; returns the folder. A process started on a
 * bundled entry runs hob's code as installed, without a TypeScript loader in it or its worker.
 * (test/support/bundled-child.ts makes a single file: a bridge in it would find no worker.)
 */
export async function bundleWithWorker(entries: Record<string, string>): Promise<string> {
  const [{ build }, { bundleOptions }, { tempDir }] = await Promise.all([import('esbuild'), import('../../scripts/build.mjs'), import('./temp-dirs.js')]);
  const out = tempDir('hob-pg-bundle-');
  await build(bundleOptions({ ...entries, 'postgres-worker': 'src/store/postgres/worker.ts' }, out));
  return out;
}

/** A memory entry as the PostgreSQL tests and benchmark write it (the repository's save comes with the Store port). */
export type TestEntry = { id: string; content: string; title?: string; tags?: string[]; updatedAt: number; lastUsedAt?: number; useCount?: number };

/** Writes entries for one person in one statement; returns their seqs in order. */
export function insertEntries(bridge: PostgresBridge, personId: string, entries: TestEntry[]): number[] {
  const rows = bridge.query<{ seq: number }>(
    `INSERT INTO memory_entries (id, person_id, title, content, content_key, tags, source, created_at, updated_at, last_used_at, use_count)
     SELECT id, $1, title, content, lower(content), coalesce(tags, '{}')::text[], 'tool', at, at, used, uses
     FROM jsonb_to_recordset($2::jsonb) AS x(id text, title text, content text, tags text[], at bigint, used bigint, uses int)
     RETURNING seq`,
    [
      personId,
      JSON.stringify(entries.map((entry) => ({ id: entry.id, title: entry.title ?? null, content: entry.content, tags: entry.tags ?? [], at: entry.updatedAt, used: entry.lastUsedAt ?? null, uses: entry.useCount ?? 0 }))),
    ],
  ).rows;
  return rows.map((row) => row.seq);
}
