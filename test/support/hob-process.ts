import Database from 'better-sqlite3';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dirs.js';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const BIN = join(import.meta.dirname, '../../bin/hob.mjs');

/**
 * A clean environment for a spawned hob: no model keys, no config from the developer, and a
 * home folder of its own, empty. The walk for secrets on disk that every hob takes after it
 * starts (src/policy/secret-walk.ts) looks through the home folder, up to 20,000 entries: the
 * developer's home cost each spawned hob about a third of a second of CPU, an empty one costs
 * nothing, and no test depends on what the developer keeps there.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('OPENAI_') || name.startsWith('HOB_')) continue;
    env[name] = value;
  }
  return { ...env, HOME: tempDir('hob-home-'), ...extra };
}

export function writeConfig(dir: string, yaml: string): string {
  const path = join(dir, 'config.yaml');
  writeFileSync(path, yaml);
  return path;
}

/**
 * The config of a `hob start` against the fake model and the fake Telegram (Ann, "100", is
 * the owner), the terminal off; `channels` adds lines under `channels:` (another platform).
 */
export function writeStartConfig(dir: string, fakes: { model: { baseUrl: string }; telegram: { token: string; apiRoot: string } }, channels = ''): string {
  return writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${fakes.model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${fakes.telegram.token}", api_root: ${fakes.telegram.apiRoot}, allow_from: ["100"] }
${channels}`,
  );
}

export type HobProcess = {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves when stdout+stderr contain `text`; rejects after timeoutMs with what was seen. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  /** Kills hob and everything it started (its own process group). */
  kill(): void;
};

/**
 * Spawns the bundled CLI in its own process group with piped stdio: `node dist/cli.js`, or
 * (`bin`) as a person's shell runs `hob`, bin/hob.mjs with the node flags of its first line.
 */
export function spawnHob(args: string[], env: NodeJS.ProcessEnv, launch: 'dist' | 'bin' = 'dist'): HobProcess {
  const child = launch === 'bin' ? spawn(BIN, args, { env, detached: true, stdio: 'pipe' }) : spawn(process.execPath, [CLI, ...args], { env, detached: true, stdio: 'pipe' });
  let seen = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    seen += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const matches = (text: string | RegExp) => (typeof text === 'string' ? seen.includes(text) : text.test(seen));
  return {
    child,
    output: () => seen,
    exited,
    waitFor: (text, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        if (matches(text)) return resolve();
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${String(text)}; output so far:\n${seen}`));
        }, timeoutMs);
        const check = () => {
          if (!matches(text)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        void exited.then(() => setTimeout(check, 0));
      }),
    kill: () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** Rows the outbox of a hob in `dir` (data in `dir/data`) has not settled: live messages or deliveries still pending. */
export function unsettled(dir: string): number {
  const db = new Database(join(dir, 'data', 'hob.db'), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) n FROM outbox WHERE status IN ('live', 'pending')").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Whether a hob in `dir` recorded a live message in this chat that the platform accepted (its id known) and that is still to settle. */
export function liveMessageRecorded(dir: string, chatId: string): boolean {
  const db = new Database(join(dir, 'data', 'hob.db'), { readonly: true });
  try {
    return db.prepare("SELECT 1 FROM outbox WHERE status = 'live' AND chat_id = ? AND platform_message_id IS NOT NULL").get(chatId) !== undefined;
  } finally {
    db.close();
  }
}
