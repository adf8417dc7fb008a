import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import { platformOf, type PersonResolver } from '../core/person.js';
import type { Job, JobTarget } from '../store/job.js';
import type { JobRepository } from '../store/jobs.js';
import { defineTool, type AnyTool, type ToolContext } from '../tools/tool.js';
import { describeSchedule, loadCronValidator, nextRun, nextRuns, parseSchedule, ScheduleError, type Schedule } from './schedule.js';
import { canonicalTimezone, formatLocal } from './time.js';

export type JobAccess = {
  jobs: JobRepository;
  clock: Clock;
  people: PersonResolver;
  /** The person's own timezone (from their profile), when they set one. */
  timezoneFor(personId: string): string | undefined;
  /** config `timezone`: for people who have not set theirs. */
  defaultTimezone: string;
  /** Owners of hob see and change everyone's jobs. */
  isOwner(platform: string, userId: string): boolean;
  /** config `scheduler.max_jobs_per_person`: jobs one person may have that can still run. */
  maxJobsPerPerson: number;
};

/** Jobs per page of schedule_list: a page stays a few thousand characters. */
export const JOBS_PER_PAGE = 20;

/** Who is asking, from a tool call's context. */
export type Asker = { personId: string; owner: boolean; platform: string; userId: string };

export function askerOf(access: JobAccess, sessionKey: string, userId: string): Asker {
  const platform = platformOf(sessionKey);
  // A report runs in its job's session (`job:<id>`) for the job's owner, never as an owner of hob.
  const reportOf = platform === 'job' ? access.jobs.get(sessionKey.slice('job:'.length))?.ownerId : undefined;
  if (reportOf !== undefined) return { personId: reportOf, owner: false, platform, userId };
  return { personId: access.people.personId(platform, userId), owner: access.isOwner(platform, userId), platform, userId };
}

export function personTimezone(access: JobAccess, personId: string): string {
  return access.timezoneFor(personId) ?? access.defaultTimezone;
}

/** A job the asker may see: their own, or anyone's for an owner of hob. Someone else's id is "not found". */
function visibleJob(access: JobAccess, asker: Asker, id: string): Job | undefined {
  const job = access.jobs.get(id.trim());
  if (!job) return undefined;
  return job.ownerId === asker.personId || asker.owner ? job : undefined;
}

export function visibleJobs(access: JobAccess, asker: Asker): Job[] {
  return asker.owner ? access.jobs.list() : access.jobs.list(asker.personId);
}

/** Session keys are `platform:chat[:thread][:u<user>]`: where a job made in that conversation delivers. */
export function targetOf(sessionKey: string): JobTarget | undefined {
  const [platform, chatId, ...rest] = sessionKey.split(':');
  if (!platform || !chatId || platform === 'job') return undefined;
  const threadId = rest.find((part) => !part.startsWith('u'));
  return { platform, chatId, ...(threadId ? { threadId } : {}) };
}

/** One job in a line or three: id, kind, schedule, state and its next run in the person's time. */
export function describeJob(job: Job, timezone: string, viewer?: string): string {
  const state = !job.enabled ? 'paused' : job.nextRunAt === undefined ? 'done' : `next ${formatLocal(job.nextRunAt, timezone)}`;
  const last = job.lastStatus ? `; last: ${job.lastStatus}` : '';
  // An owner of hob sees everyone's jobs: whose each one is.
  const whose = viewer !== undefined && job.ownerId !== viewer ? ` · of ${job.ownerId}` : '';
  return `${job.id} · ${job.kind} · ${describeSchedule(job.schedule, job.timezone)} · ${state}${last}${whose}\n  "${job.text.length > 80 ? `${job.text.slice(0, 79)}…` : job.text}"`;
}

const kind = z.enum(['reminder', 'report']);
const when = {
  at: z.string().optional().describe('ISO 8601 date and time, e.g. 2026-12-24T09:00 (local to the timezone) or 2026-12-24T09:00+01:00'),
  in: z.string().optional().describe('a duration from now: 90s, 20m, 2h30m, 1d'),
  every: z.string().optional().describe('a repeating interval, at least 1m: 30m, 2h, 1d'),
  cron: z.string().optional().describe('five cron fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * 1-5"'),
  timezone: z.string().optional().describe("IANA timezone, e.g. Europe/Berlin; default: the person's"),
};

function resolveTimezone(access: JobAccess, personId: string, given: string | undefined): string {
  if (given === undefined || given === '') return personTimezone(access, personId);
  const canonical = canonicalTimezone(given);
  if (!canonical) throw new ScheduleError(`Unknown timezone "${given}". Use an IANA name like Europe/Berlin, America/New_York or UTC.`);
  return canonical;
}

function nextThree(job: { schedule: Schedule; timezone: string; nextRunAt: number | undefined }, personZone: string): string {
  if (job.nextRunAt === undefined) return 'It has no future runs.';
  const runs = [job.nextRunAt, ...nextRuns(job.schedule, job.timezone, job.nextRunAt, 2, job.nextRunAt)];
  return `Next run${runs.length === 1 ? '' : 's'} (${personZone}): ${runs.map((run) => formatLocal(run, personZone)).join('; ')}`;
}

function failure(error: unknown): { content: string; isError: true } {
  if (error instanceof ScheduleError) return { content: error.message, isError: true };
  throw error;
}

function inJobSession(ctx: ToolContext): boolean {
  return platformOf(ctx.sessionKey) === 'job';
}

const NOT_IN_REPORT = { content: 'Schedules cannot be changed from inside a scheduled report.', isError: true } as const;

/** schedule_create, schedule_list, schedule_update, schedule_delete. */
export function scheduleTools(access: JobAccess): AnyTool[] {
  const create = defineTool({
    name: 'schedule_create',
    description:
      'Create a reminder (fixed text sent at the time) or a report (a prompt you run at the time, answer sent to this chat). ' +
      'Give exactly one of at, in, every or cron; hob computes the times, so never do date arithmetic yourself. ' +
      "Answers the job id and its next three runs in the person's local time; tell the person those.",
    input: z.strictObject({ kind, text: z.string().min(1).describe("the reminder's text, or the report's prompt"), ...when }),
    readOnly: true,
    run: async (input, ctx) => {
      if (inJobSession(ctx)) return NOT_IN_REPORT;
      const target = targetOf(ctx.sessionKey);
      if (!target) return { content: 'This conversation has no chat to deliver to.', isError: true };
      const asker = askerOf(access, ctx.sessionKey, ctx.userId);
      if (input.cron !== undefined) await loadCronValidator();
      try {
        const now = access.clock.now();
        const timezone = resolveTimezone(access, asker.personId, input.timezone);
        const schedule = parseSchedule(input, timezone, now);
        const job = access.jobs.createWithin({
          id: newJobId(),
          ownerId: asker.personId,
          createdBy: ctx.userId,
          originSession: ctx.sessionKey,
          target,
          kind: input.kind,
          text: input.text.trim(),
          schedule,
          timezone,
          nextRunAt: nextRun(schedule, timezone, now),
          createdAt: now,
        }, access.maxJobsPerPerson);
        if (!job) {
          const limit = access.maxJobsPerPerson;
          return { content: `Not created: this person already has ${limit} reminders and reports that can still run, the most one person may have (scheduler.max_jobs_per_person is ${limit}). Delete ones they no longer need (schedule_list shows them, schedule_delete removes one), then try again.`, isError: true };
        }
        const zone = personTimezone(access, asker.personId);
        return `Created ${job.kind} ${job.id}: ${describeSchedule(job.schedule, job.timezone)}.\n${nextThree(job, zone)}`;
      } catch (error) {
        return failure(error);
      }
    },
  });

  const list = defineTool({
    name: 'schedule_list',
    description: `List the person's reminders and reports with their ids and next runs, ${JOBS_PER_PAGE} a page, soonest first.`,
    input: z.strictObject({ page: z.number().int().min(1).optional().describe('which page (default 1); the answer says how many there are') }),
    readOnly: true,
    run: async (input, ctx) => {
      const asker = askerOf(access, ctx.sessionKey, ctx.userId);
      // A chat's answer may be read by a whole group: there the list is the person's own.
      // Owners see everyone's in the terminal, with /jobs in their DM, and with `hob jobs`.
      const jobs = visibleJobs(access, asker.platform === 'console' ? asker : { ...asker, owner: false });
      const zone = personTimezone(access, asker.personId);
      if (!jobs.length) return 'No reminders or reports.';
      const pages = Math.ceil(jobs.length / JOBS_PER_PAGE);
      const page = Math.min(input.page ?? 1, pages);
      const shown = jobs.slice((page - 1) * JOBS_PER_PAGE, page * JOBS_PER_PAGE);
      const where = pages > 1 ? ` (page ${page} of ${pages}: jobs ${(page - 1) * JOBS_PER_PAGE + 1}–${(page - 1) * JOBS_PER_PAGE + shown.length} of ${jobs.length})` : '';
      const more = page < pages ? `\nMore: schedule_list with page ${page + 1}.` : '';
      return `Times in ${zone}${where}:\n${shown.map((job) => describeJob(job, zone, asker.personId)).join('\n')}${more}`;
    },
  });

  const update = defineTool({
    name: 'schedule_update',
    description: 'Change a reminder or report by id: pause or resume it (enabled), change its text, or give a new time (one of at, in, every, cron) or timezone.',
    input: z.strictObject({ id: z.string().min(1), enabled: z.boolean().optional(), text: z.string().min(1).optional(), ...when }),
    readOnly: true,
    run: async (input, ctx) => {
      if (inJobSession(ctx)) return NOT_IN_REPORT;
      const asker = askerOf(access, ctx.sessionKey, ctx.userId);
      const job = visibleJob(access, asker, input.id);
      if (!job) return { content: `No job ${input.id} found. schedule_list shows the ids.`, isError: true };
      if (input.cron !== undefined) await loadCronValidator();
      try {
        const now = access.clock.now();
        const timezone = input.timezone !== undefined ? resolveTimezone(access, asker.personId, input.timezone) : job.timezone;
        const retimed = [input.at, input.in, input.every, input.cron].some((value) => value !== undefined);
        const schedule = retimed ? parseSchedule(input, timezone, now) : job.schedule;
        const changed: Job = { ...job, timezone, schedule, text: input.text?.trim() ?? job.text, enabled: input.enabled ?? job.enabled };
        if (retimed || input.timezone !== undefined || (input.enabled === true && !job.enabled)) {
          changed.nextRunAt = nextRun(schedule, timezone, now);
          changed.consecutiveFailures = 0;
        }
        access.jobs.save(changed, now);
        const zone = personTimezone(access, asker.personId);
        return `Updated ${changed.id}: ${changed.enabled ? describeSchedule(changed.schedule, changed.timezone) : 'paused'}.\n${changed.enabled ? nextThree(changed, zone) : 'It will not run until resumed.'}`;
      } catch (error) {
        return failure(error);
      }
    },
  });

  const remove = defineTool({
    name: 'schedule_delete',
    description: 'Delete a reminder or report by id.',
    input: z.strictObject({ id: z.string().min(1) }),
    readOnly: true,
    run: async (input, ctx) => {
      if (inJobSession(ctx)) return NOT_IN_REPORT;
      const asker = askerOf(access, ctx.sessionKey, ctx.userId);
      const job = visibleJob(access, asker, input.id);
      if (!job) return { content: `No job ${input.id} found. schedule_list shows the ids.`, isError: true };
      access.jobs.delete(job.id);
      return `Deleted ${job.kind} ${job.id} ("${job.text}").`;
    },
  });

  return [create, list, update, remove];
}

/** Short, unguessable, and small enough for button data (`job:pause:j1a2b3c4d`). */
function newJobId(): string {
  return `j${randomBytes(4).toString('hex')}`;
}

/** Pause, resume or delete, for /jobs buttons and `hob jobs`; answered in words. */
export function changeJob(access: JobAccess, asker: Asker, verb: 'pause' | 'resume' | 'delete', id: string): string {
  const job = visibleJob(access, asker, id);
  if (!job) return `No job ${id} found.`;
  const now = access.clock.now();
  const zone = personTimezone(access, asker.personId);
  switch (verb) {
    case 'delete':
      access.jobs.delete(job.id);
      return `Deleted ${job.kind} ${job.id} ("${job.text}").`;
    case 'pause':
      access.jobs.save({ ...job, enabled: false }, now);
      return `Paused ${job.id}. It will not run until resumed.`;
    case 'resume': {
      const resumed: Job = { ...job, enabled: true, consecutiveFailures: 0, nextRunAt: nextRun(job.schedule, job.timezone, now, job.schedule.kind === 'every' ? job.nextRunAt : undefined) };
      access.jobs.save(resumed, now);
      return resumed.nextRunAt === undefined ? `Resumed ${job.id}, but it has no future runs.` : `Resumed ${job.id}. ${nextThree(resumed, zone)}`;
    }
  }
}
