/**
 * The two processes bench/vs-floor.ts and bench/profile.ts measure against the three fakes:
 * `hob start`, and the floor (bench/floor-bot/, a bare echo bot on the same libraries,
 * bundled as scripts/build.mjs bundles hob, so both load their libraries alike).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { FloorSettings } from './floor-bot/index.js';
import { RUNNING_LINE, spawnNode, type StartedHob } from './hob-process.js';
import type { ThreeChannels } from './three-channels.js';

export type Subject = 'hob' | 'floor';

/**
 * The hob build to run: dist/, or another build of hob in the repository (`BENCH_HOB_DIST=
 * dist-before` measures an earlier commit's `npm run build`, moved there, in the same sitting).
 */
const HOB_DIST = process.env.BENCH_HOB_DIST ?? 'dist';

/** What the floor prints on stderr once all three channels are up. */
const FLOOR_RUNNING_LINE = 'floor is running';

/** Bundles the floor bot into `dir`; returns its entry point. */
export async function bundleFloor(dir: string): Promise<string> {
  await build({
    entryPoints: [join(import.meta.dirname, 'floor-bot', 'index.ts')],
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __floorRequire } from 'node:module'; const require = __floorRequire(import.meta.url);" },
    // As dist/ has them: bench/profile.ts maps the floor's costs to its packages too.
    sourcemap: true,
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
  });
  return join(dir, 'index.mjs');
}

/**
 * Spawns the subject cold against the fakes, its files in `dir`, `people` people allowed on
 * each platform (hob denies anyone else), with `nodeFlags` for node itself (profilers).
 */
export function spawnSubject(subject: Subject, fakes: ThreeChannels, options: { dir: string; floorBundle: string; people: number; nodeFlags?: string[] }): StartedHob {
  const { dir, floorBundle, people, nodeFlags = [] } = options;
  if (subject === 'hob') return spawnNode([...nodeFlags, join(HOB_DIST, 'cli.js'), '--config', fakes.writeHobConfig(dir, people), 'start'], RUNNING_LINE);
  const settings: FloorSettings = {
    historyFile: join(dir, 'history.json'),
    model: { baseUrl: fakes.model.baseUrl, apiKey: 'test', name: 'claude-bench' },
    telegram: { token: fakes.telegram.token, apiRoot: fakes.telegram.apiRoot },
    slack: { botToken: fakes.slack.botToken, appToken: fakes.slack.appToken, apiUrl: fakes.slack.apiUrl },
    discord: { token: fakes.discord.token, apiUrl: fakes.discord.apiRoot },
  };
  const path = join(dir, 'floor.json');
  writeFileSync(path, JSON.stringify(settings));
  return spawnNode([...nodeFlags, floorBundle, path], FLOOR_RUNNING_LINE);
}
