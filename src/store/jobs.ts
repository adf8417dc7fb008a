/** Scheduled jobs and their runs in the Store port: every due run is claimed once, also across processes. */
import type { ClaimPlan, Job, JobRun } from './job.js';

export type NewJob = Omit<Job, 'lastRunAt' | 'lastStatus' | 'consecutiveFailures' | 'enabled'>;

/** Jobs and their runs. A run is held by one runner (a process) until it is handed over, closed, or its lease runs out. */
export interface JobRepository {
  create(job: Omit<Job, 'lastRunAt' | 'lastStatus' | 'consecutiveFailures' | 'enabled'>): Job;
  /**
   * Creates the job unless its owner already has `maxLive` jobs that may still run (pending
   * or paused; a finished one-shot does not count): undefined then. Counting and inserting
   * are one write transaction, so two processes cannot both take the last place.
   */
  createWithin(job: NewJob, maxLive: number): Job | undefined;
  get(id: string): Job | undefined;
  /** A person's jobs (or everyone's, with no owner given), soonest first. */
  list(ownerId?: string): Job[];
  /** When the soonest enabled job is due (an index lookup), or undefined when none is. */
  nextDue(): number | undefined;
  /** Replaces what a schedule_update or a pause/resume changed. */
  save(job: Job, now: number): void;
  delete(id: string): boolean;
  /**
   * Claims the due runs of up to `limit` jobs in one write transaction: a run row is
   * inserted (unique per job and time, so a second claimer cannot insert it again) and the
   * job moves on to its next run. Another process claiming at once gets other jobs or none,
   * never the same run.
   */
  claimDue(
    now: number,
    runner: string,
    leaseMs: number,
    limit: number,
    plan: (job: Job) => ClaimPlan,
    onSkipped: (job: Job, skipped: NonNullable<ClaimPlan['skipped']>) => void,
  ): { job: Job; run: JobRun }[];
  /**
   * Runs whose runner is gone (its lease ran out, or `isGone` says its process died), taken
   * over in one transaction by `runner`. A run that was `running` comes back as it was, for
   * the caller to close as interrupted.
   */
  takeOverOrphans(now: number, runner: string, leaseMs: number, isGone: (runner: string) => boolean): JobRun[];
  /** False when the run is no longer this runner's. */
  markRunning(runId: number, runner: string, leaseUntil: number): boolean;
  /**
   * The run's output is handed to the delivery outbox: `record` inserts the outbox row in the
   * same transaction that marks the run, so a crash leaves either both or neither.
   */
  handOver(
    runId: number,
    runner: string,
    jobId: string,
    now: number,
    record: () => number,
    outcome: { ok: boolean; error?: string; pauseAfter: number },
  ): { paused: boolean; failures: number } | undefined;
  /** Links a note about a run (e.g. "it was cut off") to the run, so its delivery shows with it. */
  linkOutbox(runId: number, outboxId: number): void;
  /** Closes a run that produced nothing to deliver (interrupted, or failed without a note). */
  close(runId: number, runner: string, jobId: string, now: number, status: 'failed' | 'interrupted', error: string, pauseAfter: number): { paused: boolean; failures: number } | undefined;
  run(runId: number): (JobRun & { outboxId: number | undefined; error: string | undefined }) | undefined;
  /** A job's runs, newest first, with how their delivery went (kept apart from the run's own status). */
  runs(jobId: string, limit?: number): (JobRun & { delivery: 'pending' | 'sent' | 'failed' | undefined })[];
}
