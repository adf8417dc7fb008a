import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatClockTime, formatLongDay, formatShortDayAndTime, wallAt } from '../../src/core/zoned-format.js';

/**
 * The dates the model reads (the prompt's day, the time each message was sent, a person's
 * local time) are written without Intl's date formats, which page in ICU's data: they must
 * read exactly as en-GB's Intl formats wrote them, in every zone and at the awkward instants.
 */
const INSTANTS = [
  Date.UTC(2026, 8, 6, 20, 54, 7), // September: en-GB's four-letter "Sept"
  Date.UTC(2026, 11, 1, 9, 5),
  Date.UTC(2027, 0, 1, 0, 0, 0), // midnight at the turn of the year
  Date.UTC(2026, 2, 29, 0, 59, 59), // the minute before Europe's clocks go forward
  Date.UTC(2026, 2, 29, 1, 0, 0),
  Date.UTC(2026, 9, 25, 0, 30), // Europe's doubled hour
  Date.UTC(2028, 1, 29, 23, 59), // a leap day
];
const ZONES = ['UTC', 'Etc/UTC', 'GMT', 'Europe/Berlin', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Kiritimati', 'Pacific/Pago_Pago'];

const intl = (timezone: string, options: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat('en-GB', { ...options, timeZone: timezone });

afterEach(() => vi.restoreAllMocks());

describe('dates in a timezone', () => {
  it("read as en-GB's Intl formats write them, in every zone", () => {
    for (const timezone of ZONES) {
      for (const instant of INSTANTS) {
        const now = new Date(instant);
        expect(formatLongDay(now, timezone)).toBe(intl(timezone, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' }).format(now));
        expect(formatShortDayAndTime(now, timezone)).toBe(intl(timezone, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false }).format(now));
        expect(formatClockTime(now, timezone)).toBe(intl(timezone, { hour: '2-digit', minute: '2-digit', hour12: false }).format(now));
      }
    }
  });

  it('give the local fields, seconds included', () => {
    expect(wallAt(Date.UTC(2026, 6, 1, 10, 0, 30), 'Europe/Berlin')).toEqual({ year: 2026, month: 7, day: 1, hour: 12, minute: 0, second: 30 });
    expect(wallAt(Date.UTC(2026, 6, 1, 10, 0, 30), 'utc')).toEqual({ year: 2026, month: 7, day: 1, hour: 10, minute: 0, second: 30 });
  });

  it('in UTC, build no Intl date format (its ICU data stays out of memory)', () => {
    const built = vi.spyOn(Intl, 'DateTimeFormat');
    formatLongDay(new Date(), 'UTC');
    formatShortDayAndTime(new Date(), 'Etc/UTC');
    expect(built).not.toHaveBeenCalled();
  });

  it('refuse an unknown zone as Intl does', () => {
    expect(() => formatLongDay(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});
