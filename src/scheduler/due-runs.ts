/**
 * Which of a job's due runs fire: after a pause (hob was not running, the machine slept) the
 * newest missed run inside the grace window fires, late; older ones are skipped (the owner is
 * told once), and the job moves on to its next run. Decided inside the claim transaction
 * (JobRepository.claimDue), so two runners never decide differently.
 */
import type { ClaimPlan, Job } from '../store/job.js';
import { nextRun } from './schedule.js';

/** A run that started more than this after its time is marked late. */
const LATE_MS = 60_000;
/** At most this many missed runs are walked one by one; past that the count says "at least". */
const MAX_WALK = 1000;

/** Which of a job's due runs fires now, which are skipped, and when it runs next. */
export function planDueRuns(job: Job, now: number, graceMs: number): ClaimPlan {
  let occurrence = job.nextRunAt as number;
  let fire: number | undefined;
  let skipped: NonNullable<ClaimPlan['skipped']> | undefined;
  let walked = 0;
  let last = occurrence;
  while (occurrence <= now) {
    if (now - occurrence <= graceMs) fire = occurrence;
    else skipped = { count: (skipped?.count ?? 0) + 1, first: skipped?.first ?? occurrence, last: occurrence, atLeast: false };
    last = occurrence;
    const following = nextRun(job.schedule, job.timezone, occurrence, occurrence);
    if (following === undefined) return { fire: firing(fire, now), skipped, next: undefined };
    occurrence = following;
    if (++walked >= MAX_WALK && occurrence <= now) {
      // Too many to walk: jump to the grace window; the newest run in it fires.
      if (skipped) skipped.atLeast = true;
      fire = undefined;
      let candidate = nextRun(job.schedule, job.timezone, now - graceMs - 1, last);
      while (candidate !== undefined && candidate <= now) {
        fire = candidate;
        candidate = nextRun(job.schedule, job.timezone, candidate, candidate);
      }
      return { fire: firing(fire, now), skipped, next: candidate };
    }
  }
  return { fire: firing(fire, now), skipped, next: occurrence };
}

/** The run to start, marked late when it starts more than a minute after its time. */
function firing(scheduledFor: number | undefined, now: number): ClaimPlan['fire'] {
  return scheduledFor === undefined ? undefined : { scheduledFor, late: now - scheduledFor > LATE_MS };
}
