import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { hobConfigSchemaFor } from '../../src/config/schema.js';
import { createSandbox, type SandboxSettings } from '../../src/policy/sandbox.js';
import { bashTool } from '../../src/tools/bash.js';
import { bundleChild } from '../support/bundled-child.js';
import { makeContext, runTool } from '../tools/tool-harness.js';

const KEY = 'PRIVATE-KEY-7f3a';
const TOKEN = '123456:telegram-token-9c1e';

/**
 * Outside /tmp on purpose: the sandbox's private /tmp would hide a home under /tmp anyway,
 * and these tests must show the masks themselves.
 */
const root = realpathSync(mkdtempSync('/var/tmp/hob-sandbox-'));
const home = join(root, 'home');
const workspace = join(home, 'project');
const dataDir = join(root, 'data');
const on: SandboxSettings = { mode: 'auto', network: true };
const probe = createSandbox({ settings: on, workspace: root, home: root });
const status = probe.status();
const skipReason = status.state === 'active' ? '' : ` (skipped: ${probe.describe()})`;

beforeAll(() => {
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(home, '.config', 'gh'), { recursive: true });
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), `${KEY}\n`);
  writeFileSync(join(home, '.config', 'gh', 'hosts.yml'), `oauth_token: ${KEY}\n`);
  writeFileSync(join(home, '.bash_history'), `export TOKEN=${KEY}\n`);
  writeFileSync(join(dataDir, 'config.yaml'), `token: ${TOKEN}\n`);
  writeFileSync(join(dataDir, 'logs', 'hob.log'), `{"msg":"${TOKEN}"}\n`);
  writeFileSync(join(home, 'notes.md'), 'plain notes\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sandboxedBash(settings: SandboxSettings = on) {
  const sandbox = createSandbox({ settings, workspace, home, hiddenPaths: [join(dataDir, 'config.yaml'), join(dataDir, 'logs')] });
  return bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, sandbox, defaultTimeoutSeconds: 30 });
}

/** The sandboxed bash the tests share (made at its first use, after beforeAll): it probes bwrap and walks the home once. */
let shared: ReturnType<typeof sandboxedBash> | undefined;
const run = (command: string, tool = (shared ??= sandboxedBash())) => runTool(tool, { command }, makeContext(workspace));

/** The tricks that got past the path checks in the attack pass: none names `.ssh/id_rsa` literally. */
const TRICKS = [
  'cat ~/.ss?/id_rs?',
  'cd ~ && cat .s*/id*',
  `cat "$(echo ${Buffer.from(join(home, '.ssh/id_rsa')).toString('base64')} | base64 -d)"`,
  "find ~ -name 'id_*' -exec cat {} +",
  'a=.s; b=sh; cat ~/$a$b/id_r""sa',
  `node -e "process.stdout.write(require('fs').readFileSync(require('os').homedir() + '/.' + 'ssh/id_' + 'rsa', 'utf8'))"`,
  'cat ~/.config/gh/h*.yml ~/.bash_hist*',
];

describe('config: permissions.sandbox', () => {
  it('takes the short form and the long form, and names the choices on a typo', () => {
    const short = hobConfigSchemaFor([]).parse({ permissions: { sandbox: 'required' } });
    expect(short.permissions.sandbox).toEqual({ mode: 'required', network: true });
    const long = hobConfigSchemaFor([]).parse({ permissions: { sandbox: { mode: 'auto', network: false } } });
    expect(long.permissions.sandbox).toEqual({ mode: 'auto', network: false });
    expect(hobConfigSchemaFor([]).parse({}).permissions.sandbox).toEqual({ mode: 'auto', network: true });
    const bad = hobConfigSchemaFor([]).safeParse({ permissions: { sandbox: 'strict' } });
    expect(bad.success).toBe(false);
  });
});

describe('hob doctor', () => {
  it('says whether the sandbox is active, and fails the check when required cannot be met', async () => {
    const config = hobConfigSchemaFor([]).parse({ data_dir: join(root, 'doctor'), permissions: { sandbox: 'off' } });
    const off = (await runDoctor(config, undefined)).find((check) => check.name === 'sandbox');
    expect(off).toEqual({ name: 'sandbox', ok: true, detail: 'off (permissions.sandbox: off): bash runs without a sandbox' });
    const auto = (await runDoctor({ ...config, permissions: { ...config.permissions, sandbox: { mode: 'required', network: true } } }, undefined)).find((c) => c.name === 'sandbox');
    if (status.state === 'active') expect(auto).toMatchObject({ ok: true, detail: expect.stringMatching(/^active \(.*bwrap; network on\)$/) });
    else expect(auto).toMatchObject({ ok: false, detail: expect.stringMatching(/^required but not available: .*apt-get install bubblewrap/) });
  });
});

describe('without bubblewrap', () => {
  it('required refuses bash in one sentence naming the package; auto runs it and says it is not active', async () => {
    const missing = join(root, 'no-bwrap');
    const required = createSandbox({ settings: { mode: 'required', network: true }, workspace, home, bwrapPath: missing });
    const result = await runTool(bashTool({ sandbox: required }), { command: 'echo ran' }, makeContext(workspace));
    expect(result.isError).toBe(true);
    expect(result.content).not.toContain('ran');
    expect(result.content).toMatch(/^bash is refused: .*apt-get install bubblewrap.*\.$/);
    const auto = createSandbox({ settings: on, workspace, home, bwrapPath: missing });
    expect(auto.describe()).toMatch(/^not active: bwrap is not installed/);
    expect((await runTool(bashTool({ sandbox: auto }), { command: 'echo ran' }, makeContext(workspace))).content).toContain('ran');
  });

  it('shows what the sandbox guards against: unsandboxed, a glob reads the key', async () => {
    const plain = bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home } });
    expect((await run('cat ~/.ss?/id_rs?', plain)).content).toContain(KEY);
  });
});

describe.skipIf(status.state !== 'active')(`inside bubblewrap${skipReason}`, () => {
  it.each(TRICKS)('hides the keys from %s', async (command) => {
    const result = await run(command);
    expect(result.content).not.toContain(KEY);
  });

  it("masks hob's own config and logs but leaves ordinary files readable", async () => {
    const result = await run(`cat ${dataDir}/config.yaml ${dataDir}/logs/hob.log; ls ${dataDir}/logs | wc -l; cat ~/notes.md`);
    expect(result.content).not.toContain(TOKEN);
    expect(result.content).toContain('plain notes');
  });

  it('hides the whole data dir, also what no list names, and keeps a workspace inside it usable', async () => {
    mkdirSync(join(dataDir, 'workspace'), { recursive: true });
    writeFileSync(join(dataDir, 'memory.db'), `remembered ${TOKEN}`);
    const sandbox = createSandbox({ settings: on, workspace: join(dataDir, 'workspace'), home, dataDir });
    const tool = bashTool({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, sandbox });
    const result = await runTool(tool, { command: `cat ${dataDir}/memory.db ${dataDir}/config.yaml; ls -A ${dataDir}; echo kept > note.txt` }, makeContext(join(dataDir, 'workspace')));
    expect(result.content).not.toContain(TOKEN);
    expect(result.content).toMatch(/^workspace$/m);
    expect(readFileSync(join(dataDir, 'workspace', 'note.txt'), 'utf8')).toBe('kept\n');
  });

  it('writes only in the workspace, and /tmp is private and empty', async () => {
    writeFileSync('/tmp/hob-sandbox-outside.txt', 'outside');
    const result = await run('echo made > here.txt; echo x > ~/escape.txt; ls /tmp | wc -l; echo t > /tmp/t');
    expect(readFileSync(join(workspace, 'here.txt'), 'utf8')).toBe('made\n');
    expect(existsSync(join(home, 'escape.txt'))).toBe(false);
    expect(result.content).toMatch(/Read-only file system/);
    expect(result.content).toMatch(/^0$/m);
    rmSync('/tmp/hob-sandbox-outside.txt', { force: true });
  });

  it('sends caches that tools keep in the home directory to the private /tmp', async () => {
    const result = await run('mkdir -p "$XDG_CACHE_HOME/tool" && echo c > "$XDG_CACHE_HOME/tool/x" && cat "$XDG_CACHE_HOME/tool/x"; echo "$npm_config_cache"');
    expect(result.content).toBe('c\n/tmp/.npm\n[exit code 0]');
  });

  it('cuts the network when permissions.sandbox.network is false', async () => {
    const interfaces = (settings: SandboxSettings) => run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", sandboxedBash(settings));
    const off = await interfaces({ mode: 'auto', network: false });
    expect(off.content).toBe('lo\n[exit code 0]');
    const host = spawnSync('/bin/bash', ['-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"], { encoding: 'utf8' }).stdout;
    expect((await interfaces(on)).content).toBe(`${host}[exit code 0]`);
  });

  it("keeps hob's process and its environment out of sight (/proc/$PPID/environ, ps eww)", async () => {
    // Bundled rather than run with tsx: the same child, a second of CPU less.
    const probe = await bundleChild('test/policy/fixtures/bash-env-probe.ts');
    const probeRun = spawnSync(
      process.execPath,
      [probe, workspace, home, 'required', 'cat /proc/$PPID/environ | tr "\\0" "\\n"; ps eww; ps -ef'],
      { encoding: 'utf8', env: { ...process.env, TELEGRAM_BOT_TOKEN: TOKEN, ANTHROPIC_API_KEY: `sk-ant-${KEY}` }, timeout: 60_000 },
    );
    expect(probeRun.stderr).toBe('');
    expect(probeRun.stdout).toMatch(/\[exit code 0\]$/);
    expect(probeRun.stdout).toContain('PATH=');
    expect(probeRun.stdout).not.toContain(TOKEN);
    expect(probeRun.stdout).not.toContain(KEY);
    expect(probeRun.stdout).not.toContain('bash-env-probe');
  });
});
