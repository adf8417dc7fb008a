/**
 * bin/code-cache.mjs runs dist/'s script forms (scripts/script-form.mjs) as vm.Script and keeps
 * what V8 compiled between starts, the functions a start ran included. What a person notices is
 * only that hob starts sooner: a build run through it does what node's own loader makes of its
 * modules, on the first start and on those that read the caches, and no cache (damaged, from
 * other flags, from a file since edited) changes that. A cache V8 refuses is written again, so
 * "the caches stay as they were" below says V8 took them.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleOptions } from '../../scripts/build.mjs';
import { routeDynamicImports } from '../../scripts/dynamic-imports.mjs';
import { writeScriptForms } from '../../scripts/script-form.mjs';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { dmOf, startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { cleanEnv, spawnHob, writeStartConfig } from '../support/hob-process.js';
import { tempDir } from '../support/temp-dirs.js';

const LOADER = join(import.meta.dirname, '../../bin/code-cache.mjs');
const BANNER = String((bundleOptions({}, 'unused').banner as { js: string }).js);

/** A small dist/ as the build leaves it: the banner on each file, every import() routed, the script forms beside. */
const FILES: Record<string, string> = {
  'cli.js': `import { shared } from './chunk-a.js';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
async function main() {
  const awaited = await Promise.resolve('awaited');
  console.log('cli', shared(), awaited, join('a', 'b'));
  const later = await import('./later-b.js');
  console.log('later', later.name, later.url === new URL('./later-b.js', import.meta.url).href, later.dir === import.meta.dirname, later.bump(), later.count);
  console.log('builtin', typeof (await import('node:os')).cpus);
  console.log('text', "import('./nowhere.js')", \`import(\${'x'})\`);
  if (process.env.RUN_WORK) (await import('./work-d.js')).work();
  // As hob start does (src/core/steady-heap.ts): a V8 flag changed midway, noted for the loader.
  setFlagsFromString('--heap-growing-percent=50');
  (globalThis[Symbol.for('hob.v8-flags-changed')] ??= []).push(['--heap-growing-percent=50', '--heap-growing-percent=0']);
  const late = await import('./late-c.js');
  console.log('late', late.value);
}
main();
`,
  'chunk-a.js': `export function shared() { return 'shared'; }\n`,
  // An export that changes after it was imported is read as it is now, as a module's binding is.
  'later-b.js': `import { shared } from './chunk-a.js';
export const name = 'b+' + shared();
export const url = import.meta.url;
export const dir = import.meta.dirname;
export let count = 0;
export function bump() { count += 1; return 'bumped'; }
`,
  // Top-level code is always in a cache: a stale one would answer C1 after the edit below.
  'late-c.js': `export const value = 'C1';\n`,
  'work-d.js': `export function work() {
  const steps = [1, 2, 3].map((step) => ({ step, twice: step * 2 }));
  return steps.filter(({ twice }) => twice > 2).reduce((sum, { step }) => sum + step, 0);
}
`,
  'broken.js': `import './chunk-a.js';\nthrow new Error('broken at load');\n`,
  // As \`hob start\` imports its channels' SDKs: at once, the first connecting as soon as it is in.
  'together.js': `const order = [];
const first = import('./first-sdk.js').then(() => setImmediate(() => order.push('the first one took an answer')));
const second = import('./second-sdk.js').then((sdk) => order.push(sdk.ran));
Promise.all([first, second]).then(() => console.log(order.join(', ')));
`,
  'first-sdk.js': `export const ready = true;\n`,
  'second-sdk.js': `export const ran = 'the second one ran';\n`,
};
const EXPECTED = ['cli shared awaited a/b', 'later b+shared true true bumped 1', 'builtin function', "text import('./nowhere.js') import(x)", 'late C1'].join('\n');

async function fixture(): Promise<{ dist: string; cache: string }> {
  const root = tempDir('hob-code-cache-');
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(root, name), `${BANNER}\n${text}`);
  await routeDynamicImports(root);
  await writeScriptForms(root, BANNER);
  return { dist: root, cache: join(root, '.code-cache') };
}

/** Runs `entry` through the loader (with node's flags `flags`). */
function throughLoader(entry: string, cache: string, flags: string[] = [], env: Record<string, string> = {}) {
  const script = `const { importWithCodeCache } = await import(${JSON.stringify(LOADER)}); await importWithCodeCache(process.argv[1], process.argv[2], { writeAfterMs: 0 });`;
  return spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script, entry, cache], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
}

/** Each cache file with what says whether it was written again (a new file replaces it). */
function caches(cache: string): Map<string, string> {
  return new Map(readdirSync(cache).map((name) => {
    const stats = statSync(join(cache, name));
    return [name, `${stats.ino}:${stats.mtimeMs}`];
  }));
}

describe('dist/ loaded through the code cache', () => {
  it('does what node makes of it, and the next start takes the caches the first wrote', async () => {
    const { dist, cache } = await fixture();
    const native = spawnSync(process.execPath, [join(dist, 'cli.js')], { encoding: 'utf8', timeout: 30_000 });
    expect(native.stdout.trim()).toBe(EXPECTED);

    const first = throughLoader(join(dist, 'cli.js'), cache);
    expect(first.stderr).toBe('');
    expect(first.stdout.trim()).toBe(EXPECTED);
    const written = caches(cache);
    // One per file the start ran (broken.js and work-d.js it did not), the one loaded after the flag changed too.
    expect([...written.keys()].map((name) => name.split('.js.')[0]).sort()).toEqual(['chunk-a', 'cli', 'late-c', 'later-b']);

    const second = throughLoader(join(dist, 'cli.js'), cache);
    expect(second.stderr).toBe('');
    expect(second.stdout.trim()).toBe(EXPECTED);
    expect(caches(cache)).toEqual(written);
  });

  it('keeps compiled the functions a start ran, not only the top levels', async () => {
    const { dist, cache } = await fixture();
    const ran = throughLoader(join(dist, 'cli.js'), cache, [], { RUN_WORK: '1' });
    expect(ran.stderr).toBe('');
    const size = (dir: string) => statSync(join(dir, readdirSync(dir).find((name) => name.startsWith('work-d.js.')) as string)).size;
    const withWork = size(cache);
    // The same chunk run again by a start that only loads it: its cache holds the top level alone.
    const other = join(dist, '.other-cache');
    const loaded = throughLoader(join(dist, 'cli.js'), other, [], { RUN_WORK: '1' });
    expect(loaded.stdout.trim()).toBe(EXPECTED);
    const onlyLoaded = spawnSync(process.execPath, ['--input-type=module', '-e', `
      const vm = await import('node:vm');
      const { readFileSync } = await import('node:fs');
      const source = readFileSync(process.argv[1], 'utf8');
      const script = new vm.Script(source, { filename: process.argv[1] });
      script.runInThisContext();
      process.stdout.write(String(script.createCachedData().length));
    `, join(dist, 'script', 'work-d.js')], { encoding: 'utf8', timeout: 30_000 });
    expect(size(other)).toBe(withWork);
    expect(withWork).toBeGreaterThan(Number(onlyLoaded.stdout) + 200);
  });

  it('starts from the source when a cache is damaged, and writes it again', async () => {
    const { dist, cache } = await fixture();
    throughLoader(join(dist, 'cli.js'), cache);
    const damaged = [...caches(cache).keys()].find((name) => name.startsWith('chunk-a.js.')) as string;
    writeFileSync(join(cache, damaged), Buffer.alloc(4096, 7));

    const run = throughLoader(join(dist, 'cli.js'), cache);
    expect(run.stdout.trim()).toBe(EXPECTED);
    expect(readFileSync(join(cache, damaged)).equals(Buffer.alloc(4096, 7))).toBe(false);
    const rewritten = caches(cache);
    expect(throughLoader(join(dist, 'cli.js'), cache).stdout.trim()).toBe(EXPECTED);
    expect(caches(cache)).toEqual(rewritten);
  });

  it('runs a file edited since its cache was written as it reads now, even at the same length', async () => {
    const { dist, cache } = await fixture();
    throughLoader(join(dist, 'cli.js'), cache);
    // The script form is what the loader runs (the build writes both).
    const late = join(dist, 'script', 'late-c.js');
    writeFileSync(late, readFileSync(late, 'utf8').replace('"C1"', '"C2"'));
    const later = new Date(statSync(late).mtimeMs + 5_000);
    utimesSync(late, later, later);

    expect(throughLoader(join(dist, 'cli.js'), cache).stdout.trim()).toBe(EXPECTED.replace('late C1', 'late C2'));
    // The old content's cache is gone, the new one's written.
    expect([...caches(cache).keys()].filter((name) => name.startsWith('late-c.js.'))).toHaveLength(1);
  });

  it('keeps the caches of other node flags apart, and leaves those it has', async () => {
    const { dist, cache } = await fixture();
    throughLoader(join(dist, 'cli.js'), cache);
    const before = caches(cache);

    expect(throughLoader(join(dist, 'cli.js'), cache, ['--max-semi-space-size=4']).stdout.trim()).toBe(EXPECTED);
    const after = caches(cache);
    expect(after.size).toBe(2 * before.size);
    for (const [name, stamp] of before) expect(after.get(name)).toBe(stamp);
  });

  it('ends as node does when a file throws as it loads: its error and the file, exit 1', async () => {
    const { dist, cache } = await fixture();
    const run = throughLoader(join(dist, 'broken.js'), cache);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('broken at load');
    expect(run.stderr).toContain('broken.js');
  });

  it('takes what the network brought between the loads of modules imported at once, not after the last', async () => {
    const { dist, cache } = await fixture();
    const run = throughLoader(join(dist, 'together.js'), cache);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('the first one took an answer, the second one ran');
  });

  it('starts as well where it cannot write its caches', async () => {
    const { dist } = await fixture();
    const run = throughLoader(join(dist, 'cli.js'), join(dist, 'cli.js', 'cache'));
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe(EXPECTED);
  });
});

describe('the bin and --enable-source-maps', () => {
  it('maps a stack trace back to the sources, which node 20 does only for what its own loader loaded', async () => {
    // A checkout of its own: the real bin/, and a dist/cli.js bundled with its source map that throws.
    const root = tempDir('hob-code-cache-maps-');
    for (const dir of ['bin', 'src', 'dist']) mkdirSync(join(root, dir));
    for (const file of ['hob.mjs', 'code-cache.mjs']) copyFileSync(join(import.meta.dirname, '../../bin', file), join(root, 'bin', file));
    writeFileSync(join(root, 'src', 'boom.ts'), "export function boom(): never {\n  throw new Error('boom here');\n}\nboom();\n");
    await build({ entryPoints: [join(root, 'src', 'boom.ts')], bundle: true, format: 'esm', platform: 'node', outfile: join(root, 'dist', 'cli.js'), sourcemap: true, minifyWhitespace: true, logLevel: 'silent' });
    const env = { ...process.env, NODE_OPTIONS: '--enable-source-maps' };
    const run = spawnSync(join(root, 'bin', 'hob.mjs'), [], { encoding: 'utf8', env, timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('boom here');
    expect(run.stderr).toMatch(/src\/boom\.ts:2:9/);
  });
});

describe('hob start through the bin, as the shell runs it', () => {
  let model: FakeAnthropic;
  let telegram: FakeTelegram;
  let slack: FakeSlack;
  let discord: FakeDiscord;

  beforeAll(async () => {
    model = await startFakeAnthropic({ apiKey: 'test-key', whenEmpty: { text: 'Answered **now**.' } });
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    slack = await startFakeSlack();
    discord = await startFakeDiscord();
  });

  afterAll(async () => {
    await Promise.all([telegram.close(), slack.close(), discord.close(), model.close()]);
  });

  it('answers on every channel at its first start, which writes the caches, and at the next, which reads them', async () => {
    const dir = tempDir('hob-code-cache-start-');
    const cache = join(dir, 'code-cache');
    const config = writeStartConfig(
      dir,
      { model, telegram },
      `  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["U100"] }
  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: ["100"] }`,
    );
    const person = { telegram: { id: 100, first_name: 'Ann' }, slack: slack.person({ id: 'U100', name: 'Ann' }), discord: { id: '100', name: 'ann' } };
    const answers = {
      telegram: () => telegram.chat(person.telegram.id).filter((message) => message.text === 'Answered now.').length,
      slack: () => slack.seen(dmOf(person.slack.id)).filter((message) => message.text === 'Answered **now**.').length,
      discord: () => discord.botMessages(discord.dmChannelOf(person.discord)).filter((message) => message.content === 'Answered **now**.').length,
    };
    for (const start of [1, 2]) {
      const hob = spawnHob(['--config', config, 'start'], cleanEnv({ HOB_CODE_CACHE_DIR: cache }), 'bin');
      try {
        await hob.waitFor('hob is running on', 30_000);
        telegram.sendText(person.telegram, { id: person.telegram.id, type: 'private' }, `hello ${start}`);
        await slack.dm(person.slack, `hello ${start}`);
        discord.dm(person.discord, `hello ${start}`);
        await telegram.waitFor(() => answers.telegram() === start, 15_000, `the Telegram answer of start ${start}`);
        await slack.waitFor(() => answers.slack() === start, 15_000, `the Slack answer of start ${start}`);
        await discord.waitFor(() => answers.discord() === start, 15_000, `the Discord answer of start ${start}`);
        hob.child.kill('SIGTERM');
        expect(await hob.exited).toBe(0);
        expect(hob.output()).not.toMatch(/error|warning/i);
      } finally {
        hob.kill();
      }
      if (start === 1) {
        // Written as the first start stopped: one for each file of dist/ it loaded, the channels' among them.
        const written = readdirSync(cache);
        expect(written.some((name) => name.startsWith('cli.js.'))).toBe(true);
        expect(written.filter((name) => /adapter/.test(name)).length).toBeGreaterThanOrEqual(3);
      }
    }
  }, 90_000);
});
