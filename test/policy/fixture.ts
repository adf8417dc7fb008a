import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PermissionSettings } from '../../src/policy/permissions.js';

/** A temporary fake home (with secrets), a workspace with tricky symlinks, and a hob data dir. */
export type PolicyFixture = { root: string; home: string; workspace: string; data: string; cleanup(): void };

export function createPolicyFixture(): PolicyFixture {
  const root = mkdtempSync(join(tmpdir(), 'hob-policy-'));
  const home = join(root, 'home', 'alice');
  const workspace = join(root, 'workspace');
  const data = join(root, 'hob-data');
  for (const dir of [join(home, '.ssh'), join(home, '.aws'), join(home, 'project'), workspace, join(workspace, 'notes'), data]) {
    mkdirSync(dir, { recursive: true });
  }
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'fake key');
  writeFileSync(join(home, '.aws', 'credentials'), '[default]');
  writeFileSync(join(home, 'project', '.env'), 'TOKEN=x');
  writeFileSync(join(workspace, 'notes', 'ssh-tips.md'), 'use ed25519');
  writeFileSync(join(workspace, '.env'), 'LOCAL=1');
  writeFileSync(join(data, 'config.yaml'), 'model: {}');
  writeFileSync(join(data, 'hob.db'), '');
  // Links that look harmless from inside the workspace.
  symlinkSync(join(home, '.ssh'), join(workspace, 'keys'));
  symlinkSync(join(home, '.ssh', 'id_rsa'), join(workspace, 'innocent.txt'));
  symlinkSync(join(home, '.ssh', 'authorized_keys'), join(workspace, 'future.txt'));
  symlinkSync(join(home, 'project'), join(workspace, 'other-project'));
  return { root, home, workspace, data, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function settings(overrides: Partial<PermissionSettings> = {}): PermissionSettings {
  return { mode: 'default', allowed_tools: [], denied_tools: [], path_rules: [], denied_commands: [], ...overrides };
}
