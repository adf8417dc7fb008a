import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What every benchmark shares: percentiles over samples, number formatting, and the result
 * shape bench/run.ts collects. Benchmarks print figures; they never assert.
 */

/** One benchmark's outcome: lines for the README summary (already formatted). */
export type BenchResult = { name: string; summary: string[] };

/** The value below which `fraction` of the samples fall (nearest rank). Sorts a copy. */
export function percentile(samples: readonly number[], fraction: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] as number;
}

export const median = (samples: readonly number[]): number => percentile(samples, 0.5);

/** Rounds to a readable number of significant digits (38, 3.8, 0.38), no exponent. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

export function fmtBytes(bytes: number): string {
  if (Math.abs(bytes) >= 1024 * 1024) return `${fmt(bytes / 1024 / 1024)} MB`;
  if (Math.abs(bytes) >= 1024) return `${fmt(bytes / 1024)} KB`;
  return `${Math.round(bytes)} B`;
}

/** Runs `gc()` when node was started with --expose-gc; tells whether it could. */
export function collectGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return false;
  gc();
  gc();
  return true;
}

/**
 * Runs a benchmark module's `run` when the file is executed directly
 * (`node --import tsx bench/x.ts`), so each benchmark also works on its own.
 */
export function runIfMain(metaUrl: string, run: () => Promise<BenchResult>): void {
  const entry = process.argv[1];
  if (!entry || fileURLToPath(metaUrl) !== resolve(entry)) return;
  run().then(
    (result) => {
      // bench/run.ts reads this line to build the final table.
      process.stdout.write(`${RESULT_MARKER}${JSON.stringify(result)}\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

export const RESULT_MARKER = '@@bench-result ';
