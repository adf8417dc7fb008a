/**
 * The abort reason when hob stops on purpose (`hob start` got SIGTERM). A run stopped for it
 * is left open and resumes at the next start; a run the person stopped is finished.
 */
export const SHUTDOWN_REASON = 'hob is shutting down';

/** Why a run was stopped, when whoever stopped it said so (a string abort reason), else `fallback`. */
export function stopReason(signal: AbortSignal | undefined, fallback: string): string {
  return typeof signal?.reason === 'string' ? signal.reason : fallback;
}
