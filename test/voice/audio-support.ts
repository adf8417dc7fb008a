/**
 * Real audio for the voice tests: the shipped fixtures (test/fixtures/audio), speech made by
 * espeak-ng at test time, and lengths read by ffmpeg and ffprobe. Tests that need a tool skip,
 * saying which, when it is not installed (.ci/run installs both).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { isExecutable } from '../../src/voice/ffmpeg.js';

// Looked up on PATH, not run (starting ffmpeg costs a quarter second of CPU, in each worker
// that imports this). One that is there but broken fails its tests rather than skipping them.
export const hasEspeak = isExecutable('espeak-ng');
export const hasFfmpeg = isExecutable('ffmpeg');
export const NO_ESPEAK = ' (skipped: espeak-ng is not installed; apt-get install espeak-ng)';
export const NO_FFMPEG = ' (skipped: ffmpeg is not installed; apt-get install ffmpeg)';

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/audio/${name}`, import.meta.url));

/** The fixtures say "Remind me to call Anna at five." and last 2.03 s. */
export const FIXTURE_SECONDS = 2.03;

/** A fresh workspace inbox for one test file, removed afterwards. */
export function tempInbox(): { inbox: string; root: string; save(fixtureName: string, as: string): { path: string; savedAs: string } } {
  const root = mkdtempSync(join(tmpdir(), 'hob-voice-test-'));
  const inbox = join(root, 'inbox');
  mkdirSync(inbox);
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return {
    inbox,
    root,
    save(fixtureName, as) {
      copyFileSync(fixture(fixtureName), join(inbox, as));
      return { path: join(inbox, as), savedAs: `inbox/${as}` };
    },
  };
}

/** Speech from espeak-ng as a WAV file (22,050 Hz mono 16-bit). */
export function espeakWav(text: string, path: string): string {
  execFileSync('espeak-ng', ['-w', path, text]);
  return path;
}

/**
 * ffmpeg's reading of each file's length, in seconds, from one run over them all (ffprobe reads
 * one file a run, and each run costs ~0.25 s of CPU). Given inputs and no output, ffmpeg prints
 * each input's "Duration:" and exits with an error, which is expected here.
 */
export function ffmpegSeconds(paths: string[]): number[] {
  const run = spawnSync('ffmpeg', ['-nostdin', '-hide_banner', ...paths.flatMap((path) => ['-i', path])], { encoding: 'utf8' });
  const durations = [...run.stderr.matchAll(/^ {2}Duration: (\d+):(\d+):(\d+\.\d+)/gm)].map(([, h, m, s]) => Number(h) * 3600 + Number(m) * 60 + Number(s));
  if (durations.length !== paths.length) throw new Error(`ffmpeg read ${durations.length} lengths of ${paths.length} files: ${run.stderr.slice(-2000)}`);
  return durations;
}

/** ffprobe's reading of a file's length, to check hob's own against. */
export function ffprobeSeconds(path: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path]).toString().trim());
}
