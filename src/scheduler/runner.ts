import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { newRunnerId, runnerIsGone as isGone } from '../core/runner-id.js';
import type { Logger } from '../logger.js';
import type { ClaimPlan, Job, JobRun } from '../store/job.js';
import type { JobRepository } from '../store/jobs.js';
import type { OutboxRepository } from '../store/outbox.js';
import { encodeOutboxMessage } from '../store/outbox-message.js';
import { planDueRuns } from './due-runs.js';
import { cutOffNote, failedNote, reminderText, skippedNote } from './notes.js';
import { formatLocal } from './time.js';

export type SchedulerSettings = {
  graceMinutes: number;
  maxFailures: number;
  reportTimeoutSeconds: number;
};

/** Runs a report's prompt as a headless agent turn; never throws. */
export type ReportRunner = (job: Job, signal: AbortSignal) => Promise<{ ok: true; text: string } | { ok: false; error: string }>;

/** Crash-test hooks: where `hob start` may be killed on purpose (HOB_FAULT). */
export type FaultPoint = 'claimed' | 'handed';

export type SchedulerDeps = {
  jobs: JobRepository;
  /** The store's write transaction (Store.transaction): a batch of hand-overs commits once. */
  transaction<T>(fn: () => T): T;
  /** The gateway's outbox: run output is recorded there in the run's own transaction. */
  outbox: OutboxRepository;
  /** Asks the delivery worker to send what was just recorded (Delivery.flush). */
  kick(): void;
  clock: Clock;
  logger: Logger;
  settings: SchedulerSettings;
  runReport?: ReportRunner;
  /** The timezone answers about a job's owner use. */
  timezoneFor(ownerId: string): string;
  runnerId?: string;
  /** Whether another runner's process is gone (its claims are taken over); default: a process on this host that no longer exists. */
  isGone?(runner: string): boolean;
  fault?(point: FaultPoint): void;
};

/** How long a claim holds before another runner may take it over (a reminder is handed over in milliseconds). */
const CLAIM_LEASE_MS = 30_000;
const BATCH = 500;

/**
 * The scheduler inside `hob start`: every tick claims the due runs (one transaction), hands
 * reminders to the outbox and starts reports. Jobs live in SQLite, not in timers, so a
 * restart or a second process on the same file changes nothing about what runs when.
 */
export class Scheduler {
  readonly runnerId: string;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly reports = new Set<Promise<void>>();
  private readonly controller = new AbortController();

  constructor(private readonly deps: SchedulerDeps) {
    this.runnerId = deps.runnerId ?? newRunnerId();
  }

  /**
   * Ticks at least every `intervalMs`, and right at the next due run when that is sooner
   * (a reminder is not held until the next whole interval).
   */
  start(intervalMs = 1000): void {
    this.intervalMs = intervalMs;
    this.running = true;
    void this.loop();
  }

  private intervalMs = 1000;
  private running = false;
  /** After a failed pass the next waits a whole interval (no busy loop on a broken database). */
  private failed = false;

  private async loop(): Promise<void> {
    await this.tick();
    if (!this.running) return;
    const next = this.deps.jobs.nextDue();
    const delay = next === undefined || this.failed ? this.intervalMs : Math.max(0, Math.min(this.intervalMs, next - this.deps.clock.now()));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), delay);
    this.timer.unref();
  }

  /** Stops claiming; reports in flight are aborted (their runs end as interrupted) and awaited up to `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    this.controller.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.reports), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  /** One pass: take over orphaned runs, claim what is due, hand reminders over, start reports. Concurrent calls share a pass. */
  tick(): Promise<void> {
    this.ticking ??= Promise.resolve()
      .then(() => this.pass())
      .then(() => {
        this.failed = false;
      })
      .catch((error: unknown) => {
        this.failed = true;
        this.deps.logger.error({ err: errorMessage(error) }, 'scheduler pass failed');
      })
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** Resolves when every report started so far has finished. */
  async idle(): Promise<void> {
    while (this.reports.size) await Promise.all(this.reports);
  }

  private async pass(): Promise<void> {
    if (this.controller.signal.aborted) return;
    const { jobs, clock } = this.deps;
    let handed = false;
    for (const run of jobs.takeOverOrphans(clock.now(), this.runnerId, CLAIM_LEASE_MS, this.deps.isGone ?? isGone)) {
      const reports: { job: Job; run: JobRun }[] = [];
      handed = this.safely(run, reports) || handed;
      for (const report of reports) this.startReport(report.job, report.run);
    }
    for (;;) {
      const now = clock.now();
      const claimed = jobs.claimDue(now, this.runnerId, CLAIM_LEASE_MS, BATCH, (job) => this.plan(job, now), (job, skipped) => {
        this.record(job, skippedNote(job, skipped, this.deps.settings.graceMinutes, this.deps.timezoneFor(job.ownerId)));
        handed = true;
      });
      if (claimed.length) this.deps.fault?.('claimed');
      // One commit for the batch's hand-overs (each still its own savepoint); reports start after it.
      const reports: { job: Job; run: JobRun }[] = [];
      this.deps.transaction(() => {
        for (const { run } of claimed) handed = this.safely(run, reports) || handed;
      });
      if (handed) this.deps.fault?.('handed');
      for (const { job, run } of reports) this.startReport(job, run);
      if (claimed.length < BATCH) break;
    }
    if (handed) this.deps.kick();
  }

  /** Which of a job's due runs fires now, which are skipped, and when it runs next. */
  plan(job: Job, now: number): ClaimPlan {
    return planDueRuns(job, now, this.deps.settings.graceMinutes * 60_000);
  }

  /** One run's failure (a locked database) leaves it claimed for a later pass; the others go on. */
  private safely(run: JobRun, reports: { job: Job; run: JobRun }[]): boolean {
    try {
      return this.begin(run, reports);
    } catch (error) {
      this.deps.logger.error({ session: `job:${run.jobId}`, run: run.id, err: errorMessage(error) }, 'could not start a run; it is retried after its lease');
      return false;
    }
  }

  /** Starts a claimed (or taken-over) run; true when something was recorded for delivery. */
  private begin(run: JobRun, reports: { job: Job; run: JobRun }[]): boolean {
    const { jobs, clock } = this.deps;
    const job = jobs.get(run.jobId);
    if (!job) {
      jobs.close(run.id, this.runnerId, run.jobId, clock.now(), 'interrupted', 'the job was deleted', Infinity);
      return false;
    }
    if (run.status === 'running') {
      // Taken over from a process that died mid-report: it is not run a second time.
      const next = job.nextRunAt !== undefined && job.enabled ? ` It runs again ${formatLocal(job.nextRunAt, this.deps.timezoneFor(job.ownerId))}.` : '';
      this.handOver(job, run, { status: 'interrupted', error: 'hob stopped while the report was running' }, cutOffNote(job, next));
      return true;
    }
    switch (job.kind) {
      case 'reminder':
        this.handOver(job, run, { status: 'handed' }, reminderText(job, run, this.deps.timezoneFor(job.ownerId)));
        return true;
      case 'report':
        reports.push({ job, run });
        return false;
    }
  }

  private startReport(job: Job, run: JobRun): void {
    const { jobs, clock, settings } = this.deps;
    const limitMs = settings.reportTimeoutSeconds * 1000;
    if (!jobs.markRunning(run.id, this.runnerId, clock.now() + limitMs + CLAIM_LEASE_MS)) return;
    // A controller and a timer held until the run ends: a signal made by AbortSignal.any() over
    // AbortSignal.timeout() may be garbage-collected before it fires, and the limit never comes.
    const limit = new AbortController();
    const onStop = () => limit.abort(this.controller.signal.reason);
    this.controller.signal.addEventListener('abort', onStop, { once: true });
    const limitTimer = setTimeout(() => limit.abort(new Error('time limit')), limitMs);
    const signal = limit.signal;
    const runReport = this.deps.runReport ?? (async () => ({ ok: false as const, error: 'reports cannot run in this process' }));
    const task = runReport(job, signal)
      .catch((error: unknown) => ({ ok: false as const, error: errorMessage(error) }))
      .then((result) => {
        if (this.controller.signal.aborted) {
          // hob is stopping: the run ends as interrupted and the next start says so.
          return;
        }
        if (signal.aborted && !result.ok) result = { ok: false, error: `it ran longer than its time limit of ${settings.reportTimeoutSeconds} s` };
        if (result.ok) {
          this.handOver(job, run, { status: 'handed' }, `${result.text}${run.late ? '\n\n(Sent late: hob was not running at the scheduled time.)' : ''}`);
        } else {
          this.handOver(job, run, { status: 'failed', error: result.error }, undefined);
        }
        this.deps.kick();
      })
      .catch((error: unknown) => this.deps.logger.error({ session: `job:${job.id}`, err: errorMessage(error) }, 'could not record a report'))
      .finally(() => {
        clearTimeout(limitTimer);
        this.controller.signal.removeEventListener('abort', onStop);
        this.reports.delete(task);
      });
    this.reports.add(task);
  }

  /**
   * Records the run's outcome and its message for delivery in one transaction. A failure
   * counts toward max_failures; the note says so, and says when the job was paused.
   */
  private handOver(job: Job, run: JobRun, outcome: { status: 'handed' | 'failed' | 'interrupted'; error?: string }, text: string | undefined): void {
    const { jobs, clock, settings } = this.deps;
    const now = clock.now();
    if (outcome.status === 'interrupted') {
      this.deps.transaction(() => {
        if (jobs.close(run.id, this.runnerId, job.id, now, 'interrupted', outcome.error ?? 'interrupted', settings.maxFailures) && text) jobs.linkOutbox(run.id, this.record(job, text));
      });
      return;
    }
    let note = text ?? '';
    const result = jobs.handOver(
      run.id,
      this.runnerId,
      job.id,
      now,
      () => {
        if (outcome.status === 'failed') {
          // The count after this failure decides the wording; the repository applies it in this same transaction.
          const failures = job.consecutiveFailures + 1;
          note = failedNote(job, outcome.error ?? 'unknown error', failures, settings.maxFailures);
        }
        return this.record(job, note);
      },
      { ok: outcome.status === 'handed', error: outcome.error, pauseAfter: settings.maxFailures },
    );
    if (!result) {
      this.deps.logger.warn({ session: `job:${job.id}`, run: run.id }, 'run taken over by another runner; its result is dropped');
      return;
    }
    if (result.paused) this.deps.logger.warn({ session: `job:${job.id}`, failures: result.failures }, 'job paused after repeated failures');
  }

  /** One message for the job's target, recorded in the outbox (the delivery worker sends it). */
  private record(job: Job, text: string): number {
    const now = this.deps.clock.now();
    return this.deps.outbox.add({
      platform: job.target.platform,
      chatId: job.target.chatId,
      threadId: job.target.threadId,
      sessionKey: `job:${job.id}`,
      message: encodeOutboxMessage({ text, plain: true }),
      now,
    });
  }
}
