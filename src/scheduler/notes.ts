/**
 * What a job's owner reads from the scheduler: a reminder, a report that was cut off or
 * failed, and the runs skipped while hob was not running. Plain text, sent through the outbox.
 */
import { oneLine } from '../core/text.js';
import type { ClaimPlan, Job, JobRun } from '../store/job.js';
import { formatLocal } from './time.js';

/** A reminder as it arrives, with a line saying it is late when hob was not running at its time. */
export function reminderText(job: Job, run: JobRun, timezone: string): string {
  const late = run.late ? `\n(It was due ${formatLocal(run.scheduledFor, timezone)}; hob was not running then.)` : '';
  return `⏰ ${job.text}${late}`;
}

/** The runs skipped because they were missed by more than the grace window (told once per claim). */
export function skippedNote(job: Job, skipped: NonNullable<ClaimPlan['skipped']>, graceMinutes: number, timezone: string): string {
  const count = `${skipped.atLeast ? 'at least ' : ''}${skipped.count} run${skipped.count === 1 && !skipped.atLeast ? '' : 's'}`;
  const when = skipped.count === 1 ? `due ${formatLocal(skipped.first, timezone)}` : `due from ${formatLocal(skipped.first, timezone)} to ${formatLocal(skipped.last, timezone)}`;
  const one = skipped.count === 1 && !skipped.atLeast;
  return `While hob was not running, ${count} of your ${job.kind} "${oneLine(job.text, 60)}" (${when}, ${timezone}) ${one ? 'was' : 'were'} missed by more than ${graceMinutes} minutes, so I skipped ${one ? 'it' : 'them'}.`;
}

/** A report whose run a stop or a crash cut off; `next` says when it runs again ('' when it does not). */
export function cutOffNote(job: Job, next: string): string {
  return `Your report "${oneLine(job.text, 60)}" was cut off: hob stopped while it was running.${next}`;
}

/** A report that failed; the count after this failure decides whether it was paused. */
export function failedNote(job: Job, error: string, failures: number, maxFailures: number): string {
  const paused = failures >= maxFailures;
  return `Your report "${oneLine(job.text, 60)}" failed: ${error}.${
    paused
      ? ` That is ${failures} failures in a row, so I paused it. Resume it with /jobs (or hob jobs resume ${job.id}) once the cause is fixed.`
      : ` (${failures} of ${maxFailures} failures in a row before it pauses.)`
  }`;
}
