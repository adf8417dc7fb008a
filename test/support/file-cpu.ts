import { readFileSync } from 'node:fs';

/**
 * Where a test file's CPU goes, for bench/test-suite.ts: when HOB_TEST_CPU_FILE names a file,
 * each test file appends one JSON line to it (test/support/between-files.ts) with the worker's
 * CPU seconds so far when the file's setup began, when its imports and collection were done
 * (its first beforeAll), and when its last afterAll ended, each beside the CPU of the processes
 * the worker started and waited for. The differences are the file's imports, its tests and the
 * programs it ran; what lies between one file's end and the next one's start is the worker's
 * own work. No vitest import here: the benchmark reads the lines with these types.
 */
export const CPU_FILE_ENV = 'HOB_TEST_CPU_FILE';

/** A pair of CPU seconds: [the worker's own, its waited-for children's]. */
export type CpuPair = [number, number];

export type FileCpu = { file: string; pid: number; start: CpuPair; collected: CpuPair; end: CpuPair };

/** The line test/global-setup.ts adds after the run: the shared PostgreSQL server's CPU seconds. */
export type ServerCpu = { postgresServer: number };

/** CPU seconds of this process and of its waited-for children (Linux /proc; USER_HZ is 100). */
export function cpuNow(): CpuPair {
  const own = process.cpuUsage();
  let children = Number.NaN;
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After "pid (comm) ": state is field 3, so cutime (16) and cstime (17) sit at 13 and 14.
    children = (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    // not Linux: children unknown
  }
  return [(own.user + own.system) / 1e6, children];
}
