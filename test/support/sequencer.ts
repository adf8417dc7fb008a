import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A test file that starts programs (hob itself, MCP servers, PostgreSQL, Chromium): seconds of waiting on them. */
const STARTS_PROCESSES = /spawnHob\(|everythingServer\(|filesystemServer\(|testDatabase\(|postgresDatabase\(|spawn\(|chromium\.launch\(/;

/**
 * Orders test files longest first, so that the two workers finish together instead of one
 * starting the 30-second crash chain last while the other sits idle. A file's length is its
 * duration in the last run when vitest remembers it (node_modules/.vite); a file it does not
 * know counts as long when it starts programs (those wait on real processes), then by its size
 * with the shared suites it runs (a contract file is a few lines that run the channel contract's
 * dozens of cases: by its own size a clean clone ran it last, a 7-second tail).
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
    try {
      // Among files of a kind, a longer file has more to do: its size breaks the tie.
      const source = readFileSync(spec.moduleId, 'utf8');
      return (STARTS_PROCESSES.test(source) ? 100_000 : 0) + source.length + sharedSuitesLength(spec.moduleId, source);
    } catch {
      return 0;
    }
  }
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
