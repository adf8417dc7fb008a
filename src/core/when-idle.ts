import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** How long the event loop is watched before it counts as idle, and how busy it may be then. */
export type IdleSettings = {
  /** Length of one look (ms); the work runs after the first look that finds the loop idle. */
  windowMs?: number;
  /** The share of a look the event loop may have spent working and still count as idle (0–1). */
  maxUtilization?: number;
};

const WINDOW_MS = 200;
const MAX_UTILIZATION = 0.1;

/**
 * Runs `work` once the event loop has been (nearly) idle for a whole look of `windowMs`:
 * background work that no one waits on (the sandbox's walk for secrets) then never falls among
 * the first messages people send after a start, which keep the loop busy, but runs in the
 * first quiet moment after them. The timer does not keep the process alive. Returns a cancel.
 */
export function whenIdle(work: () => void, settings: IdleSettings = {}): () => void {
  const windowMs = settings.windowMs ?? WINDOW_MS;
  const maxUtilization = settings.maxUtilization ?? MAX_UTILIZATION;
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (utilization <= maxUtilization) {
      timer = undefined;
      work();
      return;
    }
    timer = setTimeout(look, windowMs).unref();
  };
  timer = setTimeout(look, windowMs).unref();
  return () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
}
