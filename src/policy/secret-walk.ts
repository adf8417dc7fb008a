/**
 * Finding the secrets that are really on disk: a breadth-first walk, bounded in depth and in
 * entries per root, that records every file and folder the secret matcher names. The bash
 * sandbox masks what it finds and the hard-link check compares a file's device and inode
 * with every secret file found, so a secret is hidden because of what it is, not because it
 * sits at a place on a fixed list (`~/certs/server.pem`, `~/old-laptop/.ssh/id_ed25519`).
 */
import { lstatSync, opendirSync, realpathSync, statSync, type Dir, type Dirent } from 'node:fs';
import { join } from 'node:path';

export type WalkRoot = {
  path: string;
  /** How many folder levels below `path` are looked into. */
  maxDepth: number;
  /** How many entries this root may cost; the rest of it is not seen (the result says so). */
  maxEntries: number;
  /** Also note files with more than one link, to find second names of secrets here. */
  findLinks?: boolean;
};

export type SecretWalkPlan = {
  /** Places looked at whatever the walk reaches (`~/.ssh`, `/etc/shadow`, hob's config). */
  fixed: string[];
  roots: WalkRoot[];
  isSecret(absolute: string): boolean;
};

export type SecretsOnDisk = {
  /**
   * Real paths to hide: secret files, secret folders (standing for all they hold), and names
   * under a `findLinks` root that are hard links to a secret file. Shallowest first.
   */
  paths: string[];
  /** `device:inode` of every secret file found, the files inside secret folders included. */
  identities: ReadonlySet<string>;
  /** A bound stopped the walk before it saw everything. */
  truncated: boolean;
  /** How many entries the walk looked at. */
  seen: number;
  /** When the walk finished (Date.now()). */
  takenAt: number;
};

/** Folders that hold tools and caches, never a person's credentials, and often many files. */
const SKIPPED = new Set(['node_modules', '.git', '.hg', '.svn', '.cache', '.npm', '.pnpm-store', '.yarn', '.rustup', '.pyenv', '.nvm', '__pycache__', 'site-packages', '.venv', 'venv', '.tox']);
/** Inside a secret folder only the identities of its files are needed: a smaller bound. */
const INSIDE_DEPTH = 4;
const INSIDE_ENTRIES = 2000;
/** Entries handled between two turns of the event loop in a background walk. */
const SLICE = 256;

/** The walk as steps: each `yield` is a point where a background walk lets other work run. */
function* walk(plan: SecretWalkPlan): Generator<void, SecretsOnDisk> {
  const paths = new Set<string>();
  const identities = new Set<string>();
  const links: { path: string; id: string }[] = [];
  const visited = new Set<string>();
  let truncated = false;
  let steps = 0;

  const identity = (path: string): string | undefined => {
    try {
      const stats = statSync(path, { throwIfNoEntry: false });
      return stats?.isFile() ? `${stats.dev}:${stats.ino}` : undefined;
    } catch {
      return undefined;
    }
  };
  function* inside(dir: string): Generator<void, void> {
    const queue: [string, number][] = [[dir, 0]];
    let budget = INSIDE_ENTRIES;
    for (let next = 0; next < queue.length; next++) {
      const [current, depth] = queue[next] as [string, number];
      for (const entry of list(current, budget + 1)) {
        if (budget-- <= 0) {
          truncated = true;
          return;
        }
        if (++steps % SLICE === 0) yield;
        const path = join(current, entry.name);
        if (entry.isDirectory() && depth + 1 < INSIDE_DEPTH) queue.push([path, depth + 1]);
        else if (entry.isFile()) {
          const id = identity(path);
          if (id) identities.add(id);
        }
      }
    }
  }
  function* secret(path: string): Generator<void, void> {
    if (paths.has(path)) return;
    let stats;
    try {
      stats = statSync(path, { throwIfNoEntry: false });
    } catch {
      return; // cannot be looked at: nothing can be read through it either
    }
    if (!stats) return;
    paths.add(path);
    if (stats.isFile()) identities.add(`${stats.dev}:${stats.ino}`);
    else if (stats.isDirectory()) yield* inside(path);
  }

  for (const path of plan.fixed) {
    const real = realOrUndefined(path);
    if (real !== undefined) yield* secret(real);
  }
  for (const root of plan.roots) {
    const start = realOrUndefined(root.path);
    if (start === undefined) continue;
    const queue: [string, number][] = [[start, 0]];
    let budget = root.maxEntries;
    walking: for (let next = 0; next < queue.length; next++) {
      const [dir, depth] = queue[next] as [string, number];
      if (visited.has(dir)) continue;
      visited.add(dir);
      for (const entry of list(dir, budget + 1)) {
        if (budget-- <= 0) {
          truncated = true;
          break walking;
        }
        if (++steps % SLICE === 0) yield;
        const path = join(dir, entry.name);
        if (entry.isSymbolicLink()) {
          // The link's name may look harmless; where it leads is what a command reads.
          const target = realOrUndefined(path);
          if (target !== undefined && plan.isSecret(target)) yield* secret(target);
        } else if (plan.isSecret(path)) {
          yield* secret(path);
        } else if (entry.isDirectory()) {
          if (depth + 1 < root.maxDepth && !SKIPPED.has(entry.name)) queue.push([path, depth + 1]);
        } else if (root.findLinks && entry.isFile()) {
          const stats = lstatSync(path, { throwIfNoEntry: false });
          if (stats && stats.nlink > 1) links.push({ path, id: `${stats.dev}:${stats.ino}` });
        }
      }
    }
  }
  for (const link of links) if (identities.has(link.id)) paths.add(link.path);
  return { paths: [...paths], identities, truncated, seen: steps, takenAt: Date.now() };
}

/**
 * At most `limit` entries of `dir`, sorted by name when that is all of them. Read no further
 * than the bound: a parent such as /tmp may hold tens of thousands of entries, of which a walk
 * with a few hundred left to spend would otherwise read (and allocate) every one.
 */
function list(dir: string, limit: number): Dirent[] {
  let handle: Dir | undefined;
  try {
    handle = opendirSync(dir, { bufferSize: 256 });
    const entries: Dirent[] = [];
    for (let entry: Dirent | null; entries.length < limit && (entry = handle.readSync()); ) entries.push(entry);
    // The whole folder: in name order, as a full listing gives it (the walk sees the same
    // entries first every time). A cut-off listing keeps the order the folder gave.
    return entries.length < limit ? entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) : entries;
  } catch {
    return []; // unreadable: nothing in it can be read by hob's user either
  } finally {
    handle?.closeSync();
  }
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The whole walk now, for a check that cannot wait. */
export function walkSecretsSync(plan: SecretWalkPlan): SecretsOnDisk {
  const steps = walk(plan);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** The walk in slices, letting the event loop run between them (messages keep flowing). */
export async function walkSecrets(plan: SecretWalkPlan): Promise<SecretsOnDisk> {
  const steps = walk(plan);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** What the secrets on disk are, kept between checks. */
export type SecretIndex = {
  /** The latest walk's findings; walks now when none has finished yet. */
  latest(): SecretsOnDisk;
  /** The latest walk's findings; waits for the first walk instead of walking in one go. */
  current(): Promise<SecretsOnDisk>;
};

/**
 * Walks when first asked, then keeps the findings; once they are older than `ttlMs`, the
 * next question starts a walk in the background and is answered with the findings at hand,
 * so no check pays for a walk after the first. The plan is asked for at every walk.
 */
export function createSecretIndex(plan: () => SecretWalkPlan, ttlMs = 30_000): SecretIndex {
  let found: SecretsOnDisk | undefined;
  let walking: Promise<SecretsOnDisk> | undefined;
  const refresh = (): Promise<SecretsOnDisk> =>
    (walking ??= walkSecrets(plan())
      .then((result) => (found = result))
      .finally(() => (walking = undefined)));
  const stale = (at: SecretsOnDisk) => Date.now() - at.takenAt > ttlMs;
  return {
    latest() {
      if (!found) return (found = walkSecretsSync(plan()));
      if (stale(found)) void refresh().catch(() => undefined);
      return found;
    },
    async current() {
      if (!found) return refresh();
      if (stale(found)) void refresh().catch(() => undefined);
      return found;
    },
  };
}
