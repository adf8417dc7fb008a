/**
 * Wall-clock time in an IANA timezone, and the few English date formats hob writes with it
 * (the day in the system prompt, the time a message was sent, a person's local time).
 *
 * The names are written here rather than by Intl: the first Intl.DateTimeFormat of a process
 * pages in ~6 MB of ICU's locale, calendar and zone data, for as long as it runs. In UTC (the
 * default timezone) the fields come from the Date itself and ICU is never touched; in any
 * other zone one numeric formatter per zone gives them (built once: building one costs about
 * as much as formatting a hundred dates). The output is what en-GB's Intl formats write.
 */

/** Local date and time fields; month is 1-12. */
export type Wall = { year: number; month: number; day: number; hour: number; minute: number; second: number };

/** Names of UTC itself (lower case): no offset, ever. */
const UTC_NAMES = new Set(['utc', 'etc/utc', 'uct', 'etc/uct', 'gmt', 'etc/gmt', 'gmt0', 'etc/gmt0', 'gmt+0', 'etc/gmt+0', 'gmt-0', 'etc/gmt-0', 'greenwich', 'etc/greenwich', 'universal', 'etc/universal', 'zulu', 'etc/zulu']);

const numeric = new Map<string, Intl.DateTimeFormat>();

function numericFormat(timezone: string): Intl.DateTimeFormat {
  let format = numeric.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    numeric.set(timezone, format);
  }
  return format;
}

/** The local fields of an instant in `timezone`. Throws a RangeError for an unknown zone, as Intl does. */
export function wallAt(instant: number, timezone: string): Wall {
  if (UTC_NAMES.has(timezone.toLowerCase())) {
    const date = new Date(instant);
    return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: date.getUTCHours(), minute: date.getUTCMinutes(), second: date.getUTCSeconds() };
  }
  const wall: Wall = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of numericFormat(timezone).formatToParts(instant)) {
    switch (part.type) {
      case 'year':
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second':
        wall[part.type] = Number(part.value);
        break;
      default:
        break;
    }
  }
  return wall;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
/** en-GB's short months: four letters for September. */
const SHORT_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sept', 'Oct', 'Nov', 'Dec'];

function weekdayOf(wall: Wall): string {
  return WEEKDAYS[new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay()] as string;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** "Tuesday, 1 December 2026". */
export function formatLongDay(now: Date, timezone: string): string {
  const wall = wallAt(now.getTime(), timezone);
  return `${weekdayOf(wall)}, ${wall.day} ${MONTHS[wall.month - 1]} ${wall.year}`;
}

/** "Tue, 1 Dec 2026, 09:05". */
export function formatShortDayAndTime(now: Date, timezone: string): string {
  const wall = wallAt(now.getTime(), timezone);
  return `${weekdayOf(wall).slice(0, 3)}, ${wall.day} ${SHORT_MONTHS[wall.month - 1]} ${wall.year}, ${pad(wall.hour)}:${pad(wall.minute)}`;
}

/** "09:05" (24 hours). */
export function formatClockTime(now: Date, timezone: string): string {
  const wall = wallAt(now.getTime(), timezone);
  return `${pad(wall.hour)}:${pad(wall.minute)}`;
}
