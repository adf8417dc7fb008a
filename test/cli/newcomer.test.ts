import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';

const BIN = join(import.meta.dirname, '../../bin/hob.mjs');

/** A checkout of its own: bin/ (hob.mjs and the loader it starts dist/ with), and whatever else the test lays out. */
function checkout(files: Record<string, string>): string {
  const root = tempDir('hob-checkout-');
  mkdirSync(join(root, 'bin'));
  copyFileSync(BIN, join(root, 'bin', 'hob.mjs'));
  copyFileSync(join(BIN, '..', 'code-cache.mjs'), join(root, 'bin', 'code-cache.mjs'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const runBin = (root: string) => spawnSync(process.execPath, [join(root, 'bin', 'hob.mjs'), '--help'], { encoding: 'utf8', timeout: 30_000 });

describe('bin/hob.mjs before a build', () => {
  it('without dist/ and no way to build, says in one line what to run (no stack trace)', () => {
    const root = checkout({ 'src/cli.ts': 'export {};\n' });
    const run = runBin(root);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^hob: dist\/ is missing \(hob is not built yet\); run "npm install && npm run build" in .+, then try again\.\n$/);
  });

  it('with dist/ older than src/, builds it and then starts', () => {
    const root = checkout({
      'dist/cli.js': "console.log('old build');\n",
      'src/cli.ts': 'export {};\n',
      'scripts/build.mjs': "import { writeFileSync } from 'node:fs';\nwriteFileSync('dist/cli.js', \"console.log('new build');\\n\");\n",
    });
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(root, 'dist/cli.js'), old, old);
    expect(runBin(root).stdout).toBe('new build\n');
    // Up to date now: started as it is (the build script older than the build).
    writeFileSync(join(root, 'scripts/build.mjs'), "throw new Error('must not build again');\n");
    utimesSync(join(root, 'scripts/build.mjs'), old, old);
    utimesSync(join(root, 'scripts'), old, old);
    expect(runBin(root).stdout).toBe('new build\n');
  });

  it('rebuilds after a file deep in src/ or adapters/ is edited in place, after one is deleted, and after the build script changed', () => {
    const counting = "import { readFileSync, writeFileSync } from 'node:fs';\nconst n = Number(readFileSync('builds', 'utf8')) + 1;\nwriteFileSync('builds', String(n));\nwriteFileSync('dist/cli.js', `console.log('build ${n}');\\n`);\n";
    const root = checkout({
      'builds': '0',
      'dist/cli.js': "console.log('build 0');\n",
      'src/cli.ts': 'export {};\n',
      'src/gateway/deep/part.ts': 'export {};\n',
      'adapters/chat/index.ts': 'export {};\n',
      'scripts/build.mjs': counting,
    });
    // Built an hour after every source was written, as `npm run build` leaves it.
    const hourAgo = new Date(Date.now() - 3600_000);
    const twoHoursAgo = new Date(Date.now() - 7200_000);
    for (const path of ['src/cli.ts', 'src/gateway/deep/part.ts', 'src/gateway/deep', 'src/gateway', 'src', 'adapters/chat/index.ts', 'adapters/chat', 'adapters', 'scripts/build.mjs', 'scripts']) {
      utimesSync(join(root, path), twoHoursAgo, twoHoursAgo);
    }
    utimesSync(join(root, 'dist/cli.js'), hourAgo, hourAgo);
    expect(runBin(root).stdout).toBe('build 0\n');

    // An edit in place, three directories down: only the file's own time moves.
    writeFileSync(join(root, 'src/gateway/deep/part.ts'), 'export const edited = 1;\n');
    utimesSync(join(root, 'src/gateway/deep'), twoHoursAgo, twoHoursAgo);
    expect(runBin(root).stdout).toBe('build 1\n');
    expect(runBin(root).stdout).toBe('build 1\n');

    // A file removed (as `git pull` may): only its directory's time moves.
    utimesSync(join(root, 'src/gateway/deep/part.ts'), twoHoursAgo, twoHoursAgo);
    utimesSync(join(root, 'dist/cli.js'), hourAgo, hourAgo);
    expect(runBin(root).stdout).toBe('build 1\n');
    rmSync(join(root, 'adapters/chat/index.ts'));
    expect(runBin(root).stdout).toBe('build 2\n');

    // How dist/ is bundled changed (a pull that touched only scripts/): built again.
    utimesSync(join(root, 'adapters/chat'), twoHoursAgo, twoHoursAgo);
    utimesSync(join(root, 'dist/cli.js'), hourAgo, hourAgo);
    expect(runBin(root).stdout).toBe('build 2\n');
    writeFileSync(join(root, 'scripts/bundle-plugins.mjs'), 'export const later = [];\n');
    expect(runBin(root).stdout).toBe('build 3\n');
  });
});

describe('early exits', () => {
  it('hob start whose chat token is refused ends with hob’s own sentence, the log flushed', async () => {
    const telegram = await startFakeTelegram();
    try {
      const dir = tempDir();
      const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { api_key: test-key }\nchannels:\n  telegram: { token: "999:wrong-token", api_root: ${telegram.apiRoot} }\n`);
      const hob = spawnHob(['--config', path, 'start'], cleanEnv());
      hob.child.stdin.end();
      expect(await hob.exited).toBe(1);
      const out = hob.output();
      expect(out).not.toMatch(/sonic boom|at .+\.js:\d+/);
      expect(out.trim().split('\n').at(-1)).toMatch(/^hob failed: .*401/);
      expect(existsSync(join(dir, 'data', 'logs', 'hob.log'))).toBe(true);
    } finally {
      await telegram.close();
    }
  });

  it('hob start whose Telegram cannot be reached says where it looked and exits (nothing left retrying)', async () => {
    const dir = tempDir();
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { api_key: test-key }\nchannels:\n  telegram: { token: "999:some-token", api_root: http://127.0.0.1:9 }\n`);
    const hob = spawnHob(['--config', path, 'start'], cleanEnv());
    hob.child.stdin.end();
    expect(await hob.exited).toBe(1);
    const out = hob.output();
    expect(out).not.toMatch(/sonic boom|at .+\.js:\d+/);
    expect(out.trim().split('\n').at(-1)).toMatch(/^hob failed: Telegram is not reachable at http:\/\/127\.0\.0\.1:9 \(.*\)\. Check the network, or channels\.telegram\.api_root\.$/);
  });
});
