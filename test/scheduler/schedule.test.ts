import { beforeAll, describe, expect, it } from 'vitest';
import { loadCronValidator, nextRuns, parseSchedule, ScheduleError, type Schedule } from '../../src/scheduler/schedule.js';

beforeAll(loadCronValidator);

const iso = (runs: number[]) => runs.map((run) => new Date(run).toISOString().replace(':00.000Z', 'Z'));
const at = (text: string) => Date.parse(text);

// Europe/Berlin: 2027-03-28 02:00 CET → 03:00 CEST (01:00Z); 2027-10-31 03:00 CEST → 02:00 CET (01:00Z).
// America/New_York: 2027-03-14 02:00 EST → 03:00 EDT (07:00Z); 2027-11-07 02:00 EDT → 01:00 EST (06:00Z).
const table: { name: string; cron: string; tz: string; after: string; runs: string[] }[] = [
  { name: 'weekdays at 08:00 over a weekend', cron: '0 8 * * 1-5', tz: 'Europe/Berlin', after: '2026-12-04T12:00Z', runs: ['2026-12-07T07:00Z', '2026-12-08T07:00Z', '2026-12-09T07:00Z'] },
  { name: '09:00 keeps its local hour across spring forward', cron: '0 9 * * *', tz: 'Europe/Berlin', after: '2027-03-27T12:00Z', runs: ['2027-03-28T07:00Z', '2027-03-29T07:00Z'] },
  { name: 'Berlin 02:30 does not exist on 28 March: runs at 03:00 CEST', cron: '30 2 * * *', tz: 'Europe/Berlin', after: '2027-03-27T12:00Z', runs: ['2027-03-28T01:00Z', '2027-03-29T00:30Z'] },
  { name: 'two times in the Berlin gap run once, at its end', cron: '0,30 2 * * *', tz: 'Europe/Berlin', after: '2027-03-27T12:00Z', runs: ['2027-03-28T01:00Z', '2027-03-29T00:00Z', '2027-03-29T00:30Z'] },
  { name: 'Berlin 02:30 occurs twice on 31 October: runs once, the first time', cron: '30 2 * * *', tz: 'Europe/Berlin', after: '2027-10-30T12:00Z', runs: ['2027-10-31T00:30Z', '2027-11-01T01:30Z'] },
  { name: 'half-hourly through the Berlin fall-back hour: the repeated hour is not run again', cron: '*/30 2-3 * * *', tz: 'Europe/Berlin', after: '2027-10-30T23:00Z', runs: ['2027-10-31T00:00Z', '2027-10-31T00:30Z', '2027-10-31T02:00Z', '2027-10-31T02:30Z'] },
  { name: 'New York 02:30 does not exist on 14 March: runs at 03:00 EDT', cron: '30 2 * * *', tz: 'America/New_York', after: '2027-03-13T12:00Z', runs: ['2027-03-14T07:00Z', '2027-03-15T06:30Z'] },
  { name: 'New York 01:30 occurs twice on 7 November: runs once', cron: '30 1 * * *', tz: 'America/New_York', after: '2027-11-06T12:00Z', runs: ['2027-11-07T05:30Z', '2027-11-08T06:30Z'] },
  { name: 'New York weekdays 09:00 around fall back', cron: '0 9 * * 1-5', tz: 'America/New_York', after: '2027-11-05T12:00Z', runs: ['2027-11-05T13:00Z', '2027-11-08T14:00Z', '2027-11-09T14:00Z'] },
  { name: 'first of the month in UTC', cron: '0 0 1 * *', tz: 'UTC', after: '2026-12-15T00:00Z', runs: ['2027-01-01T00:00Z', '2027-02-01T00:00Z'] },
];

describe('cron next runs across daylight-saving changes', () => {
  it.each(table)('$name ($cron, $tz)', ({ cron, tz, after, runs }) => {
    expect(iso(nextRuns({ kind: 'cron', expression: cron }, tz, at(after), runs.length))).toEqual(runs);
  });
});

describe('at, in and every', () => {
  const now = at('2026-12-01T10:00Z');
  const first = (input: Parameters<typeof parseSchedule>[0], tz = 'Europe/Berlin') => {
    const schedule: Schedule = parseSchedule(input, tz, now);
    return iso(nextRuns(schedule, tz, now, 3));
  };

  it.each([
    ['local to the timezone', '2026-12-24T09:00', 'Europe/Berlin', '2026-12-24T08:00Z'],
    ['local, with a space and seconds', '2027-07-01 09:00:00', 'America/New_York', '2027-07-01T13:00Z'],
    ['with an offset (the timezone does not matter)', '2026-12-24T09:00+05:30', 'Europe/Berlin', '2026-12-24T03:30Z'],
    ['in UTC', '2026-12-24T09:00Z', 'America/New_York', '2026-12-24T09:00Z'],
    ['a local time spring-forward skips: the end of the gap', '2027-03-28T02:30', 'Europe/Berlin', '2027-03-28T01:00Z'],
    ['a local time that occurs twice: the first', '2027-11-07T01:30', 'America/New_York', '2027-11-07T05:30Z'],
  ])('at %s', (_name, value, tz, expected) => {
    expect(first({ at: value }, tz)).toEqual([expected]);
  });

  it.each([
    ['90s', '2026-12-01T10:01:30.000Z'],
    ['20m', '2026-12-01T10:20Z'],
    ['2h30m', '2026-12-01T12:30Z'],
    ['1d', '2026-12-02T10:00Z'],
  ])('in %s', (value, expected) => {
    expect(first({ in: value })).toEqual([expected]);
  });

  it('every 2h30m from now, at fixed intervals (not wall-clock hours)', () => {
    expect(first({ every: '2h30m' })).toEqual(['2026-12-01T12:30Z', '2026-12-01T15:00Z', '2026-12-01T17:30Z']);
  });

  it.each([
    [{}, 'No time given'],
    [{ at: '2026-12-24T09:00', in: '20m' }, 'Only one of at, in, every and cron'],
    [{ at: '2026-11-30T09:00' }, 'is in the past'],
    [{ at: 'tomorrow at 9' }, 'not an ISO 8601 date and time'],
    [{ at: '2027-02-30T09:00' }, 'not a real date'],
    [{ in: 'soon' }, 'not a duration'],
    [{ every: '30s' }, 'shorter than one minute'],
    [{ cron: '0 8 * *' }, 'has 4 fields; it needs five'],
    [{ cron: '61 8 * * *' }, 'minute'],
    [{ cron: '0 0 31 2 *' }, 'impossible day of month'],
  ])('rejects %j: %s', (input, message) => {
    expect(() => parseSchedule(input, 'Europe/Berlin', now)).toThrow(ScheduleError);
    expect(() => parseSchedule(input, 'Europe/Berlin', now)).toThrow(message);
  });
});
