import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox, probeSandboxEarly, type SandboxSettings } from '../../src/policy/sandbox.js';

const root = mkdtempSync(join(tmpdir(), 'hob-sandbox-early-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A stand-in for bwrap that says yes to the check and notes each run, so the runs can be
 * counted. Written by a child process: a file this process had open for writing could be held
 * open by a child forked meanwhile (another test's), and running it would then fail with
 * "Text file busy".
 */
function countingBwrap(name: string, exitCode = 0): { path: string; runs: () => number } {
  const path = join(root, name);
  const log = join(root, `${name}.runs`);
  const script = `#!/bin/sh\necho run >> '${log}'\n${exitCode ? "echo 'No permissions to create new namespace' >&2\n" : ''}exit ${exitCode}\n`;
  execFileSync('/bin/sh', ['-c', 'cat > "$1" && chmod 755 "$1"', 'sh', path], { input: script });
  return { path, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

const on: SandboxSettings = { mode: 'auto', network: true };

describe.runIf(process.platform === 'linux')('the sandbox check started while the channels load', () => {
  it('is the answer the app\'s sandbox gives: bwrap runs once, and bash is sandboxed', async () => {
    const bwrap = countingBwrap('bwrap-yes');
    probeSandboxEarly({ settings: on, bwrapPath: bwrap.path });
    const sandbox = createSandbox({ settings: on, workspace: root, home: root, bwrapPath: bwrap.path });
    expect(await sandbox.prepare()).toEqual({ state: 'active', bwrap: bwrap.path });
    expect(sandbox.describe()).toContain('active');
    expect(bwrap.runs()).toBe(1);
  });

  it('keeps its verdict for the settings it was made for: required without a working bwrap still refuses bash', async () => {
    const bwrap = countingBwrap('bwrap-no', 1);
    const required: SandboxSettings = { mode: 'required', network: true };
    probeSandboxEarly({ settings: on, bwrapPath: bwrap.path });
    probeSandboxEarly({ settings: required, bwrapPath: bwrap.path });
    const sandbox = createSandbox({ settings: required, workspace: root, home: root, bwrapPath: bwrap.path });
    expect(await sandbox.wrap(['/bin/bash', '-c', 'true'])).toEqual({ refused: expect.stringContaining('bash is refused') });
    expect(bwrap.runs()).toBe(2);
  });
});
