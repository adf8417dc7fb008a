import { linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import { createSandbox, type SandboxSettings } from '../../src/policy/sandbox.js';
import { createSensitivePaths } from '../../src/policy/sensitive-paths.js';
import { bashTool } from '../../src/tools/bash.js';
import { makeContext, runTool } from '../tools/tool-harness.js';
import { settings } from './fixture.js';

/**
 * Secrets the README names by pattern, not by place, under the real bubblewrap. The fake
 * home is outside /tmp on purpose: bash gets a private /tmp, which would hide it anyway.
 */
const KEY = 'PATTERN-SECRET-51c9';
const root = realpathSync(mkdtempSync('/var/tmp/hob-sandbox-secrets-'));
const home = join(root, 'home');
const workspace = join(home, 'workspace');
const on: SandboxSettings = { mode: 'auto', network: true };
const probe = createSandbox({ settings: on, workspace: root, home: root });
const active = probe.status().state === 'active';

/** Each secret, and a command that reaches it by a glob the command check cannot read. */
const SECRETS: [string, string][] = [
  ['certs/server.pem', 'cat ~/cert?/*.pem'],
  ['project/.env', 'cat ~/proj*/.env'],
  ['project/.env.production', 'cat ~/proj*/.env.p*'],
  ['backup/id_rsa', 'cat ~/back*/id_*'],
  ['old-laptop/.ssh/id_ed25519', 'cat ~/old-*/.ss?/id_*'],
  ['.SSH/id_rsa', 'cat ~/.SS?/id_*'],
  ['keys/deploy.key', 'cat ~/key?/*.key'],
];

beforeAll(() => {
  mkdirSync(workspace, { recursive: true });
  for (const [path] of SECRETS) {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), `${KEY} in ${path}\n`);
  }
  writeFileSync(join(home, 'project', '.env.example'), 'TOKEN=put-yours-here\n');
  writeFileSync(join(home, 'notes.md'), 'plain notes\n');
  writeFileSync(join(workspace, '.env'), 'LOCAL=the project of the workspace\n');
  // Second names for secrets, inside the workspace: no telling name at all.
  linkSync(join(home, 'certs', 'server.pem'), join(workspace, 'cert-copy.txt'));
  linkSync(join(home, 'project', '.env'), join(workspace, 'settings.txt'));
  linkSync(join(home, 'backup', 'id_rsa'), join(workspace, 'notes.txt'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sandboxedBash(rescanMs?: number) {
  const sensitive = createSensitivePaths({ workspace, home, ...(rescanMs !== undefined ? { rescanMs } : {}) });
  const sandbox = createSandbox({ settings: on, workspace, home, sensitive });
  return bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, sandbox, defaultTimeoutSeconds: 30 });
}
const plainBash = () => bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } });
/** The sandboxed bash the tests share (made at its first use, after beforeAll): it probes bwrap and walks the home once. */
let shared: ReturnType<typeof sandboxedBash> | undefined;
const run = (command: string, tool = (shared ??= sandboxedBash())) => runTool(tool, { command }, makeContext(workspace));

describe('pattern secrets without the sandbox (the control: each command does reach its file)', () => {
  it.each(SECRETS)('%s: `%s` reads it', async (path, command) => {
    expect((await run(command, plainBash())).content).toContain(`${KEY} in ${path}`);
  });
});

describe.skipIf(!active)(`pattern secrets inside bubblewrap${active ? '' : ` (skipped: ${probe.describe()})`}`, () => {
  it.each(SECRETS)('%s is masked: `%s` finds nothing', async (_path, command) => {
    expect((await run(command)).content).not.toContain(KEY);
  });

  it('masks hard links to them in the workspace, and /etc/shadow and /etc/gshadow', async () => {
    const result = await run('cat cert-copy.txt settings.txt notes.txt; cat /etc/shado? /etc/gshado?');
    expect(result.content).not.toContain(KEY);
    for (const file of ['/etc/shadow', '/etc/gshadow']) {
      let outside = '';
      try {
        outside = readFileSync(file, 'utf8');
      } catch {
        continue; // not readable by this user anyway
      }
      const firstLine = outside.split('\n')[0] ?? '';
      expect(firstLine).not.toBe('');
      expect(result.content).not.toContain(firstLine);
    }
  });

  it('leaves templates, ordinary files and the workspace’s own .env readable', async () => {
    const result = await run('cat ~/project/.env.example ~/notes.md .env');
    expect(result.content).toBe('TOKEN=put-yours-here\nplain notes\nLOCAL=the project of the workspace\n[exit code 0]');
  });

  it('masks a secret that appears after the sandbox started, once the walk is taken again', async () => {
    const tool = sandboxedBash(0);
    expect((await run('cat ~/later/*.pem', tool)).content).toContain('No such file');
    mkdirSync(join(home, 'later'));
    writeFileSync(join(home, 'later', 'new.pem'), `${KEY} made later\n`);
    await vi.waitFor(async () => expect((await run('cat ~/later/*.pem', tool)).content).not.toContain(KEY), { timeout: 10_000, interval: 50 });
  });
});

describe('the path check refuses hard links to pattern secrets', () => {
  const checker = () =>
    createPermissionChecker(settings({ mode: 'full_auto', allowed_tools: ['read_file'], path_rules: [{ pattern: '/**', allow: true }] }), { workspace, home });

  it.each(['cert-copy.txt', 'settings.txt', 'notes.txt'])('read_file %s is refused as a hard link to a secret', (path) => {
    const decision = checker().evaluate({ toolName: 'read_file', readOnly: true, path });
    expect(decision).toEqual({ behavior: 'deny', reason: `~/workspace/${path} is a hard link to a sensitive file and is always denied` });
  });

  it('the case variant and the pattern secrets themselves are refused by name', () => {
    for (const [path] of SECRETS) expect(checker().evaluate({ toolName: 'read_file', readOnly: true, path: `~/${path}` }).behavior).toBe('deny');
    expect(checker().evaluate({ toolName: 'read_file', readOnly: true, path: '~/project/.env.example' }).behavior).toBe('allow');
  });
});
