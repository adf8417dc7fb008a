/**
 * When a job runs: one-shot (`at`, or `in` a duration from now), every interval, or a
 * five-field cron expression in an IANA timezone. hob computes every time here; the model
 * never does date arithmetic.
 *
 * Cron maths: node-cron 4 validates expressions (its per-field messages name what is wrong),
 * but its `getNextRuns` starts from the real clock and skips a local time that a
 * spring-forward removes. So next runs are found in wall-clock time (croner 11 walking the
 * pattern in UTC, where no local time is missing or doubled) and each local match is turned
 * into an instant by `instantOf`: a missing time runs at the first instant after the gap, a
 * doubled time runs once, at its first occurrence.
 */
import { Cron } from 'croner';
import type { Schedule } from '../store/job.js';
import { instantOf, wallAt, wallMs, type Wall } from './time.js';

/** A job's schedule, as the store keeps it. */
export type { Schedule } from '../store/job.js';

type CronValidator = typeof import('node-cron').validateDetailed;
let validator: CronValidator | undefined;

/**
 * Loads node-cron's validator (about 10 ms, so not at start-up: only before the first
 * schedule is checked). Without it, croner's own parse errors are reported instead.
 */
export async function loadCronValidator(): Promise<void> {
  validator ??= (await import('node-cron')).validateDetailed;
}

/** A schedule_create / schedule_update input that cannot be scheduled; the message says which and why. */
export class ScheduleError extends Error {}

export type ScheduleInput = { at?: string; in?: string; every?: string; cron?: string };

const MINUTE = 60_000;

/** `90s`, `20m`, `2h30m`, `1d`, `1d2h` → milliseconds; undefined when it is not a duration. */
function parseDuration(text: string): number | undefined {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/i.exec(text.trim().replace(/\s+/g, ''));
  if (!match || !match.slice(1).some((part) => part !== undefined)) return undefined;
  const [days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number];
  const ms = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
  return ms > 0 ? ms : undefined;
}

/** "every 2h30m" in words for answers. */
function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || '0s';
}

/** Turns exactly one of at / in / every / cron into a schedule; throws ScheduleError naming the problem. */
export function parseSchedule(input: ScheduleInput, timezone: string, now: number): Schedule {
  const given = (['at', 'in', 'every', 'cron'] as const).filter((key) => input[key] !== undefined && input[key] !== '');
  if (given.length !== 1) {
    throw new ScheduleError(
      given.length === 0
        ? 'No time given: set exactly one of at (an ISO 8601 time), in (a duration like 20m), every (a duration like 1h) or cron (five fields).'
        : `Only one of at, in, every and cron may be set; got ${given.join(' and ')}.`,
    );
  }
  const key = given[0] as 'at' | 'in' | 'every' | 'cron';
  const value = (input[key] as string).trim();
  switch (key) {
    case 'at': {
      const at = parseAt(value, timezone);
      if (at <= now) throw new ScheduleError(`at "${value}" is in the past (it is now ${isoLocal(now, timezone)} in ${timezone}). Give a future time.`);
      return { kind: 'at', at };
    }
    case 'in': {
      const ms = parseDuration(value);
      if (ms === undefined) throw new ScheduleError(`in "${value}" is not a duration. Write it like 90s, 20m, 2h30m or 1d.`);
      return { kind: 'at', at: now + ms };
    }
    case 'every': {
      const ms = parseDuration(value);
      if (ms === undefined) throw new ScheduleError(`every "${value}" is not a duration. Write it like 20m, 2h30m or 1d.`);
      if (ms < MINUTE) throw new ScheduleError(`every "${value}" is shorter than one minute; the shortest interval is 1m.`);
      return { kind: 'every', everyMs: ms };
    }
    case 'cron':
      checkCron(value);
      return { kind: 'cron', expression: value.replace(/\s+/g, ' ') };
  }
}

/**
 * ISO 8601 date and time: with `Z` or an offset it is that instant; without, it is the local
 * time in `timezone` (a time a spring-forward skips runs at the end of the gap).
 */
function parseAt(text: string, timezone: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(text);
  if (!match) {
    throw new ScheduleError(`at "${text}" is not an ISO 8601 date and time. Write it like 2026-12-24T09:00 (local to the timezone) or 2026-12-24T09:00+01:00.`);
  }
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  const wall: Wall = { year, month, day, hour, minute, second };
  const probe = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 || probe.getUTCDate() !== day || probe.getUTCMonth() !== month - 1) {
    throw new ScheduleError(`at "${text}" is not a real date and time (check the month, day, hour and minute).`);
  }
  const offset = match[7];
  if (offset === undefined) return instantOf(wall, timezone).instant;
  if (offset.toUpperCase() === 'Z') return wallMs(wall);
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
  if (minutes > 18 * 60) throw new ScheduleError(`at "${text}" has an offset beyond ±18:00.`);
  return wallMs(wall) - sign * minutes * MINUTE;
}

function checkCron(expression: string): void {
  const fields = expression.split(/\s+/);
  if (fields.length !== 5) {
    throw new ScheduleError(
      `cron "${expression}" has ${fields.length} field${fields.length === 1 ? '' : 's'}; it needs five: minute hour day-of-month month day-of-week (like "0 8 * * 1-5" for weekdays at 08:00).`,
    );
  }
  const checked = validator?.(expression) ?? { valid: true, errors: [] };
  if (!checked.valid) {
    const problems = checked.errors.map((error) => `${error.field}: ${error.message}`).join('; ');
    throw new ScheduleError(`cron "${expression}" is not valid (${problems}). Fields are minute 0-59, hour 0-23, day 1-31, month 1-12, weekday 0-7.`);
  }
  let pattern: Cron;
  try {
    pattern = cronPattern(expression);
  } catch (error) {
    throw new ScheduleError(`cron "${expression}" is not valid (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (pattern.nextRun(new Date(0)) === null) throw new ScheduleError(`cron "${expression}" never matches a date (e.g. 31 February).`);
}

const patterns = new Map<string, Cron>();

function cronPattern(expression: string): Cron {
  let pattern = patterns.get(expression);
  if (!pattern) {
    // Wall-clock matching: UTC has no gaps or doubled hours. Day-of-month and day-of-week combine with OR, as in Vixie cron.
    pattern = new Cron(expression, { timezone: 'UTC', mode: '5-part', paused: true });
    if (patterns.size > 10_000) patterns.clear();
    patterns.set(expression, pattern);
  }
  return pattern;
}

/**
 * The first run strictly after `after`. For `every`, runs fall on `anchor + k × interval`
 * (the anchor is the job's first run). Undefined when a one-shot has passed.
 */
export function nextRun(schedule: Schedule, timezone: string, after: number, anchor?: number): number | undefined {
  switch (schedule.kind) {
    case 'at':
      return schedule.at > after ? schedule.at : undefined;
    case 'every': {
      const start = anchor ?? after + schedule.everyMs;
      if (start > after) return start;
      return start + (Math.floor((after - start) / schedule.everyMs) + 1) * schedule.everyMs;
    }
    case 'cron': {
      const pattern = cronPattern(schedule.expression);
      // Wall times are walked from `after`'s own: a doubled hour maps back to its first
      // occurrence, which may lie before `after`; such matches are passed over.
      let wall = wallMs(wallAt(after, timezone));
      for (let i = 0; i < 2000; i++) {
        const match = pattern.nextRun(new Date(wall));
        if (!match) return undefined;
        wall = match.getTime();
        const { instant } = instantOf(wallFromMs(wall), timezone);
        if (instant > after) return instant;
      }
      return undefined;
    }
  }
}

/** The first `count` runs strictly after `after`. */
export function nextRuns(schedule: Schedule, timezone: string, after: number, count: number, anchor?: number): number[] {
  const runs: number[] = [];
  let cursor = after;
  let first = anchor;
  while (runs.length < count) {
    const next = nextRun(schedule, timezone, cursor, first);
    if (next === undefined) break;
    runs.push(next);
    cursor = next;
    first = next;
  }
  return runs;
}

/** How a schedule reads in an answer: "at …", "every 2h", "cron 0 8 * * 1-5". */
export function describeSchedule(schedule: Schedule, timezone: string): string {
  switch (schedule.kind) {
    case 'at':
      return `once at ${isoLocal(schedule.at, timezone)} ${timezone}`;
    case 'every':
      return `every ${formatDuration(schedule.everyMs)}`;
    case 'cron':
      return `cron "${schedule.expression}" (${timezone})`;
  }
}

function wallFromMs(ms: number): Wall {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

/** "2026-12-24 09:00" local to the timezone. */
function isoLocal(instant: number, timezone: string): string {
  const wall = wallAt(instant, timezone);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${wall.year}-${pad(wall.month)}-${pad(wall.day)} ${pad(wall.hour)}:${pad(wall.minute)}`;
}
