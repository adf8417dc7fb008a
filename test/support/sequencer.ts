import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A test file that starts programs (hob itself, MCP servers, PostgreSQL, Chromium): seconds of waiting on them. */
const STARTS_PROCESSES = /spawnHob\(|everythingServer\(|filesystemServer\(|testDatabase\(|postgresDatabase\(|spawn\(|chromium\.launch\(/;

/**
 * Orders test files longest first, so that the workers finish together instead of one
 * starting the 30-second crash chain last while the others sit idle. A file's length is its
 * duration in the last run when vitest remembers it (node_modules/.vite); on a fresh clone (CI
 * always is one) the seconds it took in a recorded run of the whole suite (durations.json:
 * by what they start and their size, ffmpeg's conversions and the 200-message floods ran
 * last, a 4-second tail on one worker); a file neither knows counts as long when it starts
 * programs (those wait on real processes), then by its size with the shared suites it runs (a
 * contract file is a few lines that run the channel contract's dozens of cases).
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const weights = new Map(files.map((spec) => [spec, this.weight(spec)]));
    return [...files].sort((a, b) => (weights.get(b) ?? 0) - (weights.get(a) ?? 0));
  }

  private weight(spec: TestSpecification): number {
    const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
    const last = this.ctx.cache.getFileTestResults(key);
    if (last) return last.duration;
    const recorded = recordedSeconds().get(relative(this.ctx.config.root, spec.moduleId).split(sep).join('/'));
    if (recorded !== undefined) return recorded * 1000;
    try {
      // Among files of a kind, a longer file has more to do: its size breaks the tie.
      const source = readFileSync(spec.moduleId, 'utf8');
      return (STARTS_PROCESSES.test(source) ? 100_000 : 0) + source.length + sharedSuitesLength(spec.moduleId, source);
    } catch {
      return 0;
    }
  }
}

/** What durations.json records, by the file's path from the repository (`test/cli/restart.test.ts`). */
export type RecordedDurations = { about: string; seconds: Record<string, number> };
export const DURATIONS_FILE = join(import.meta.dirname, 'durations.json');

let recorded: Map<string, number> | undefined;
function recordedSeconds(): Map<string, number> {
  if (recorded) return recorded;
  try {
    recorded = new Map(Object.entries((JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as RecordedDurations).seconds));
  } catch {
    recorded = new Map(); // none recorded: sizes and what the files start decide
  }
  return recorded;
}

/** The length of the test modules a file imports that hold cases of their own (`it(`), not helpers. */
function sharedSuitesLength(file: string, source: string): number {
  let length = 0;
  for (const [, path] of source.matchAll(/from '(\.\.?\/[^']+)\.js'/g)) {
    const imported = join(dirname(file), `${path}.ts`);
    if (/[/\\](support|fakes)[/\\]/.test(imported) || !existsSync(imported)) continue;
    const text = readFileSync(imported, 'utf8');
    if (/\bit\(/.test(text)) length += text.length;
  }
  return length;
}
