import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** Who is running something (a scheduled run, a background task): host:pid:random. */
export function newRunnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** A runner on this host whose process is gone left its claims behind; one elsewhere cannot be checked. */
export function runnerIsGone(runner: string): boolean {
  const [host, pid] = runner.split(':');
  if (host !== hostname() || !pid || Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
