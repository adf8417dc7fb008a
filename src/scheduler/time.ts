/**
 * Wall-clock time in an IANA timezone, without a date library: core/zoned-format.ts gives the
 * local fields of an instant; the inverse (local fields → instant) handles the two
 * daylight-saving cases the way hob promises: a local time that does not exist (spring
 * forward) is the first instant after the gap; a local time that occurs twice (fall back) is
 * its first occurrence.
 */

export { canonicalTimezone } from '../core/timezone.js';
import { wallAt, type Wall } from '../core/zoned-format.js';

export { wallAt, type Wall };

/** The wall time read as if it were UTC: a plain number to compare and step local times. */
export function wallMs(wall: Wall): number {
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
}

/** The timezone's offset from UTC at an instant, in ms (Berlin in summer: +7,200,000). */
function offsetAt(instant: number, timezone: string): number {
  const floored = Math.floor(instant / 1000) * 1000;
  return wallMs(wallAt(floored, timezone)) - floored;
}

/**
 * The instant a local time names. In a spring-forward gap: the first instant after the gap
 * (02:30 that does not exist → 03:00 new time). When it occurs twice: the first occurrence.
 */
export function instantOf(wall: Wall, timezone: string): { instant: number; shifted: boolean } {
  const local = wallMs(wall);
  const before = offsetAt(local - 14 * 3600_000, timezone);
  const after = offsetAt(local + 14 * 3600_000, timezone);
  const candidates = [...new Set([local - before, local - after])].filter((instant) => wallMs(wallAt(instant, timezone)) === local);
  if (candidates.length) return { instant: Math.min(...candidates), shifted: false };
  // A gap: the offset changes between `local - before` and `local - after`; find the switch.
  let low = Math.min(local - before, local - after);
  let high = Math.max(local - before, local - after);
  while (high - low > 1000) {
    const middle = Math.floor((low + high) / 2000) * 1000;
    if (offsetAt(middle, timezone) === before) low = middle;
    else high = middle;
  }
  return { instant: high, shifted: true };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Mon 7 Dec 2026 08:00" in the timezone; seconds only when they are not zero. */
export function formatLocal(instant: number, timezone: string): string {
  const wall = wallAt(instant, timezone);
  const weekday = WEEKDAYS[new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay()];
  const time = `${pad(wall.hour)}:${pad(wall.minute)}${wall.second ? `:${pad(wall.second)}` : ''}`;
  return `${weekday} ${wall.day} ${MONTHS[wall.month - 1]} ${wall.year} ${time}`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}
