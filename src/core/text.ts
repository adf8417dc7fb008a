/** Small text helpers every layer may use (the scheduler's notes, the gateway's progress lines). */

/** A text on one line, cut to `max` characters with "…". */
export function oneLine(value: string, max: number): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
