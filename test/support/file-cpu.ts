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

/**
 * A process's CPU seconds from Linux's /proc/<pid>/stat: its own (user, system) and that of
 * the children it waited for (reaped). Undefined where there is no /proc (not Linux).
 */
export function procCpu(pid: number | 'self' = 'self'): { user: number; system: number; childrenUser: number; childrenSystem: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After "pid (comm) ": state is field 3, so utime, stime, cutime, cstime (14-17) sit at 11-14.
    // USER_HZ is 100 on Linux.
    const [user, system, childrenUser, childrenSystem] = [11, 12, 13, 14].map((index) => Number(fields[index]) / 100) as [number, number, number, number];
    return [user, system, childrenUser, childrenSystem].every(Number.isFinite) ? { user, system, childrenUser, childrenSystem } : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds of this process and of its waited-for children. */
export function cpuNow(): CpuPair {
  const own = process.cpuUsage();
  const proc = procCpu();
  return [(own.user + own.system) / 1e6, proc ? proc.childrenUser + proc.childrenSystem : Number.NaN];
}
