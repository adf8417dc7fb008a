/** Temporary config files for the config tests, removed after each test file. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { loadHobConfig } from '../../src/app/channels.js';

const root = mkdtempSync(join(tmpdir(), 'hob-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;

/** A fresh directory to use as HOME or as a config file's home. */
export function freshDir(): string {
  const dir = join(root, `dir-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes `text` to `<freshDir>/<name>` (or to `path`) and returns the absolute path. */
export function writeConfig(text: string, path = join(freshDir(), 'config.yaml')): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** Loads `text` from a file with a clean environment; returns the file and the error message. */
export function configErrorFor(text: string, env: NodeJS.ProcessEnv = {}): { file: string; message: string } {
  const file = writeConfig(text);
  try {
    loadHobConfig({ path: file, env: { HOME: freshDir(), ...env } });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return { file, message: (error as ConfigError).message };
  }
  throw new Error(`expected ${file} to be rejected`);
}
