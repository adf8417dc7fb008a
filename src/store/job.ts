/**
 * One job and one run as the store keeps them: the types the scheduler works with, and how a
 * row becomes one. A schedule is stored as its kind and one value (a time, an interval, a cron
 * expression); parsing and computing runs is the scheduler's (src/scheduler/schedule.ts).
 */

/** When a job runs: once at an instant, every interval, or on a cron expression in the job's timezone. */
export type Schedule = { kind: 'at'; at: number } | { kind: 'every'; everyMs: number } | { kind: 'cron'; expression: string };

/** A schedule as its row's two columns (`schedule_kind`, `schedule`). */
export function encodeSchedule(schedule: Schedule): { kind: Schedule['kind']; value: string } {
  switch (schedule.kind) {
    case 'at':
      return { kind: 'at', value: String(schedule.at) };
    case 'every':
      return { kind: 'every', value: String(schedule.everyMs) };
    case 'cron':
      return { kind: 'cron', value: schedule.expression };
  }
}

export function decodeSchedule(kind: string, value: string): Schedule {
  switch (kind) {
    case 'at':
      return { kind: 'at', at: Number(value) };
    case 'every':
      return { kind: 'every', everyMs: Number(value) };
    case 'cron':
      return { kind: 'cron', expression: value };
    default:
      throw new Error(`unknown schedule kind ${kind}`);
  }
}

export type JobKind = 'reminder' | 'report';

/** Where a job's output goes: any platform the person uses (it need not be where it was made). */
export type JobTarget = { platform: string; chatId: string; threadId?: string };

export type Job = {
  id: string;
  /** The person (see PersonResolver) who owns it. */
  ownerId: string;
  /** The platform user id that made it: reports run as this user (their "always allow" rules apply). */
  createdBy: string;
  /** The conversation it was made in. */
  originSession: string;
  target: JobTarget;
  kind: JobKind;
  /** The reminder's text, or the report's prompt. */
  text: string;
  schedule: Schedule;
  timezone: string;
  enabled: boolean;
  nextRunAt: number | undefined;
  lastRunAt: number | undefined;
  lastStatus: string | undefined;
  consecutiveFailures: number;
  createdAt: number;
};

export type RunStatus = 'claimed' | 'running' | 'handed' | 'failed' | 'interrupted';

/** One claimed run of a job. */
export type JobRun = { id: number; jobId: string; scheduledFor: number; late: boolean; status: RunStatus; runner: string };

/** What the runner decided for one due job, inside the claim transaction. */
export type ClaimPlan = {
  /** The run to start now (absent when every due run was too old). */
  fire?: { scheduledFor: number; late: boolean };
  /** Runs older than the grace window, skipped; the owner is told once. */
  skipped: { count: number; first: number; last: number; atLeast: boolean } | undefined;
  /** The next run after these, or undefined when the job is done (a one-shot). */
  next: number | undefined;
};

export type JobRowDb = {
  id: string;
  owner_id: string;
  created_by: string;
  origin_session: string;
  platform: string;
  chat_id: string;
  thread_id: string | null;
  kind: JobKind;
  text: string;
  schedule_kind: string;
  schedule: string;
  timezone: string;
  enabled: number;
  next_run_at: number | null;
  last_run_at: number | null;
  last_status: string | null;
  consecutive_failures: number;
  created_at: number;
};

export type RunRowDb = { id: number; job_id: string; scheduled_for: number; late: number; status: RunStatus; runner: string };

export function toJob(row: JobRowDb): Job {
  return {
    id: row.id,
    ownerId: row.owner_id,
    createdBy: row.created_by,
    originSession: row.origin_session,
    target: { platform: row.platform, chatId: row.chat_id, ...(row.thread_id ? { threadId: row.thread_id } : {}) },
    kind: row.kind,
    text: row.text,
    schedule: decodeSchedule(row.schedule_kind, row.schedule),
    timezone: row.timezone,
    enabled: row.enabled === 1,
    nextRunAt: row.next_run_at ?? undefined,
    lastRunAt: row.last_run_at ?? undefined,
    lastStatus: row.last_status ?? undefined,
    consecutiveFailures: row.consecutive_failures,
    createdAt: row.created_at,
  };
}

export function toRun(row: RunRowDb): JobRun {
  return { id: row.id, jobId: row.job_id, scheduledFor: row.scheduled_for, late: row.late === 1, status: row.status, runner: row.runner };
}
