import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPermissionChecker } from '../../src/policy/permissions.js';
import { globTool } from '../../src/tools/glob.js';
import { grepTool } from '../../src/tools/grep.js';
import { makeContext, runTool } from '../tools/tool-harness.js';
import { createPolicyFixture, settings } from './fixture.js';

const fx = createPolicyFixture();
afterAll(() => fx.cleanup());

// Wide open on purpose: what is tested here must hold in full_auto with allow rules too.
const checker = createPermissionChecker(
  settings({ mode: 'full_auto', allowed_tools: ['read_file', 'bash', 'grep', 'send_file', 'write_file', 'edit_file'], path_rules: [{ pattern: '/**', allow: true }] }),
  { workspace: fx.workspace, home: fx.home, protectedPaths: [join(fx.data, 'config.yaml')] },
);
const onPath = (toolName: string, path: string) => checker.evaluate({ toolName, readOnly: toolName !== 'write_file', path });
const bash = (command: string) => checker.evaluate({ toolName: 'bash', readOnly: false, command });

describe("hob's own process is out of reach", () => {
  it.each(['/proc/self/environ', '/proc/thread-self/environ', `/proc/${process.pid}/environ`, `/proc/${process.ppid}/cmdline`, '/proc/1/environ', '/proc/self/task/1/environ', '/proc/self/mem'])(
    'read_file %s is refused',
    (path) => {
      const decision = onPath('read_file', path);
      expect(decision.behavior).toBe('deny');
      expect(decision.reason).toContain('sensitive path');
    },
  );

  it.each(['cat /proc/$PPID/environ', 'tr "\\0" "\\n" < /proc/self/environ', 'strings /proc/"$PPID"/cmdline', 'ps eww -p $PPID', 'ps e', 'ps axe', 'sudo ps auxe'])(
    'bash `%s` is refused',
    (command) => expect(bash(command).behavior).toBe('deny'),
  );

  it('still allows ordinary process listings and /proc reads', () => {
    expect(bash('ps aux').behavior).toBe('allow');
    expect(bash('ps -ef | grep node').behavior).toBe('allow');
    expect(onPath('read_file', '/proc/cpuinfo').behavior).toBe('allow');
  });
});

describe('a hard link to a secret is a secret', () => {
  mkdirSync(join(fx.workspace, 'linked'), { recursive: true });
  const link = join(fx.workspace, 'linked', 'notes.txt');
  linkSync(join(fx.home, '.ssh', 'id_rsa'), link);
  const configLink = join(fx.workspace, 'settings.txt');
  linkSync(join(fx.data, 'config.yaml'), configLink);
  writeFileSync(join(fx.workspace, 'linked', 'plain.txt'), 'fake key, but a copy of my own');

  it.each(['read_file', 'send_file', 'write_file', 'edit_file', 'grep', 'glob'])('%s on the link is refused', (tool) => {
    const decision = onPath(tool, 'linked/notes.txt');
    expect(decision.behavior).toBe('deny');
    expect(decision.reason).toContain('hard link to a sensitive file');
  });

  it("also a link to hob's own config, and a bash command naming the link", () => {
    expect(onPath('read_file', configLink).behavior).toBe('deny');
    expect(bash('cat linked/notes.txt').behavior).toBe('deny');
  });

  it('grep does not find it and glob does not list it, from the workspace or above', async () => {
    const ctx = { ...makeContext(fx.workspace), isSensitivePath: (path: string, resolved?: boolean) => checker.isSensitivePath(path, resolved) };
    const found = await runTool(grepTool(), { pattern: 'fake key', path: '.' }, ctx);
    expect(found.content).toContain('plain.txt');
    expect(found.content).not.toContain('notes.txt');
    const listed = await runTool(globTool, { pattern: 'linked/*' }, ctx);
    expect(listed.content).toContain('plain.txt');
    expect(listed.content).not.toContain('notes.txt');
  });

  it('a file that merely has other links (a package store) stays readable', () => {
    const shared = join(fx.workspace, 'pkg-a.js');
    writeFileSync(shared, 'module.exports = 1');
    linkSync(shared, join(fx.workspace, 'pkg-b.js'));
    expect(onPath('read_file', 'pkg-b.js').behavior).toBe('allow');
  });
});

describe('the longer secret list', () => {
  it.each([
    '~/.config/gh/hosts.yml',
    '~/.git-credentials',
    '~/.pypirc',
    '~/.cargo/credentials',
    '~/.cargo/credentials.toml',
    '~/.gem/credentials',
    '~/.terraform.d/credentials.tfrc.json',
    '~/.config/hub',
    '~/.password-store/email/gmail.gpg',
    '~/.local/share/keyrings/login.keyring',
    '~/.bash_history',
    '~/.zsh_history',
    '~/.local/share/fish/fish_history',
    '~/.python_history',
    '~/.psql_history',
    '~/.mozilla/firefox/abc.default/logins.json',
    '~/.config/google-chrome/Default/Login Data',
    '~/.config/chromium/Default/Cookies',
    '~/.config/BraveSoftware/Brave-Browser/Default/Cookies',
    '~/Library/Application Support/Google/Chrome/Default/Cookies',
    '~/Library/Keychains/login.keychain-db',
    '~/.vault-token',
    '~/.s3cfg',
    '~/.config/rclone/rclone.conf',
    '~/.m2/settings.xml',
    '/etc/ssh/ssh_host_ed25519_key',
  ])('%s is denied', (path) => {
    expect(onPath('read_file', path).behavior).toBe('deny');
  });

  it('while look-alikes stay readable', () => {
    for (const path of ['~/.config/gh/config.yml', '~/.cargo/config.toml', 'docs/history.md', '~/.config/chromium-notes.txt']) {
      expect(onPath('read_file', path).behavior).toBe('allow');
    }
  });
});
