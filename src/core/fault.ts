/**
 * Crash tests: `HOB_FAULT=<scope>:<point>` kills this process at that point, as a power cut
 * would (SIGKILL: no handler runs, nothing is flushed). Unset in normal use: no hook at all.
 */
export function faultFromEnv<P extends string>(scope: string, value = process.env.HOB_FAULT): ((point: P) => void) | undefined {
  if (!value?.startsWith(`${scope}:`)) return undefined;
  const wanted = value.slice(scope.length + 1);
  return (point) => {
    if (point === wanted) process.kill(process.pid, 'SIGKILL');
  };
}
