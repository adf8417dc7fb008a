import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/engine.js';
import { cleanEnv } from '../support/hob-process.js';

const ROOT = join(import.meta.dirname, '../..');

/**
 * Stands in for dist/cli.js: keeps ~4 MB of young objects alive while it allocates ~64 MB,
 * which grows V8's young generation to the most node lets it have, and prints that most.
 */
const YOUNG_GENERATION_REPORT = `import { getHeapSpaceStatistics } from 'node:v8';
const ring = new Array(64);
let most = 0;
for (let n = 0; n < 1000; n++) {
  ring[n % ring.length] = new Array(8192).fill(n);
  if (n % 32 === 0) most = Math.max(most, getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size);
}
console.log(JSON.stringify({ execArgv: process.execArgv, youngMB: most / 1048576 }));
`;

/** A checkout of its own: the real bin/ and package.json, a build step that does nothing, and the report as dist/cli.js. */
function checkout(): string {
  const root = tempDir('hob-young-');
  for (const dir of ['bin', 'dist', 'scripts']) mkdirSync(join(root, dir));
  for (const file of ['hob.mjs', 'code-cache.mjs']) copyFileSync(join(ROOT, 'bin', file), join(root, 'bin', file));
  copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  writeFileSync(join(root, 'scripts', 'build.mjs'), '');
  writeFileSync(join(root, 'dist', 'cli.js'), YOUNG_GENERATION_REPORT);
  return root;
}

const env = { ...cleanEnv(), NODE_OPTIONS: '' };

/** Runs `file args` in `cwd` (exiting 0, nothing on stderr) and returns the most its young generation grew to, in MB. */
async function youngMB(file: string, args: string[], cwd?: string): Promise<number> {
  const { stdout, stderr } = await promisify(execFile)(file, args, { cwd, encoding: 'utf8', env, timeout: 60_000 });
  expect(stderr).toBe('');
  return (JSON.parse(stdout.trim().split('\n').at(-1) as string) as { youngMB: number }).youngMB;
}

// V8 lets node's young generation grow to 32 MB (two 16 MB semi-spaces), and a running hob
// reached it within its first 90 messages: ~14 MB more RSS than it needs. `hob start` caps it at
// 16 MB from node's start (V8 reads the cap only then).
describe('the young generation of a person’s hob start', () => {
  it.concurrent('grows to 32 MB under plain node (what the cap is measured against)', async () => {
    expect(await youngMB(process.execPath, [join(checkout(), 'dist', 'cli.js')])).toBe(32);
  }, 60_000);

  it.concurrent('stays at 16 MB when started through the bin, as the shell runs `hob start`', async () => {
    // Run as the kernel runs it: the bin's first line starts node.
    expect(await youngMB(join(checkout(), 'bin', 'hob.mjs'), ['start'])).toBe(16);
  }, 60_000);

  it.concurrent('stays at 16 MB under `npm start`', async () => {
    expect(await youngMB('npm', ['start', '--silent'], checkout())).toBe(16);
  }, 60_000);
});
