import { encodeSchedule, toJob, toRun, type ClaimPlan, type Job, type JobRowDb, type JobRun, type RunRowDb, type RunStatus } from '../job.js';
import type { JobRepository, NewJob } from '../jobs.js';
import type { Db } from './db.js';

/**
 * Jobs on SQLite (the port: ../jobs.ts). Every due run is claimed in one write transaction,
 * so it starts once. Write transactions that read first are IMMEDIATE: in WAL mode a deferred
 * one that read an older snapshot fails (SQLITE_BUSY_SNAPSHOT) when another process wrote meanwhile.
 */
export class SqliteJobs implements JobRepository {
  constructor(private readonly db: Db) {}

  create(job: NewJob): Job {
    const schedule = encodeSchedule(job.schedule);
    this.db
      .prepare(
        `INSERT INTO jobs (id, owner_id, created_by, origin_session, platform, chat_id, thread_id, kind, text, schedule_kind, schedule, timezone, enabled, next_run_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
      )
      .run(
        job.id,
        job.ownerId,
        job.createdBy,
        job.originSession,
        job.target.platform,
        job.target.chatId,
        job.target.threadId ?? null,
        job.kind,
        job.text,
        schedule.kind,
        schedule.value,
        job.timezone,
        job.nextRunAt ?? null,
        job.createdAt,
        job.createdAt,
      );
    return this.get(job.id) as Job;
  }

  /**
   * Creates the job unless its owner already has `maxLive` jobs that may still run (pending
   * or paused; a finished one-shot does not count): undefined then. Counting and inserting
   * are one IMMEDIATE transaction, so two processes cannot both take the last place.
   */
  createWithin(job: NewJob, maxLive: number): Job | undefined {
    return this.db
      .transaction(() => {
        const live = this.db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM jobs WHERE owner_id = ? AND (enabled = 0 OR next_run_at IS NOT NULL)').get(job.ownerId);
        return (live?.n ?? 0) >= maxLive ? undefined : this.create(job);
      })
      .immediate();
  }

  get(id: string): Job | undefined {
    const row = this.db.prepare<[string], JobRowDb>('SELECT * FROM jobs WHERE id = ?').get(id);
    return row ? toJob(row) : undefined;
  }

  /** A person's jobs (or everyone's, with no owner given), soonest first. */
  list(ownerId?: string): Job[] {
    const rows =
      ownerId === undefined
        ? this.db.prepare<[], JobRowDb>('SELECT * FROM jobs ORDER BY next_run_at IS NULL, next_run_at, created_at').all()
        : this.db.prepare<[string], JobRowDb>('SELECT * FROM jobs WHERE owner_id = ? ORDER BY next_run_at IS NULL, next_run_at, created_at').all(ownerId);
    return rows.map(toJob);
  }

  /** When the soonest enabled job is due (an index lookup), or undefined when none is. */
  nextDue(): number | undefined {
    return this.db.prepare<[], { due: number | null }>('SELECT MIN(next_run_at) due FROM jobs WHERE enabled = 1 AND next_run_at IS NOT NULL').get()?.due ?? undefined;
  }

  /** Replaces what a schedule_update or a pause/resume changed. */
  save(job: Job, now: number): void {
    const schedule = encodeSchedule(job.schedule);
    this.db
      .prepare(
        `UPDATE jobs SET text = ?, schedule_kind = ?, schedule = ?, timezone = ?, enabled = ?, next_run_at = ?,
           consecutive_failures = ?, platform = ?, chat_id = ?, thread_id = ?, updated_at = ? WHERE id = ?`,
      )
      .run(
        job.text,
        schedule.kind,
        schedule.value,
        job.timezone,
        job.enabled ? 1 : 0,
        job.nextRunAt ?? null,
        job.consecutiveFailures,
        job.target.platform,
        job.target.chatId,
        job.target.threadId ?? null,
        now,
        job.id,
      );
  }

  delete(id: string): boolean {
    return this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM job_runs WHERE job_id = ?').run(id);
        return this.db.prepare('DELETE FROM jobs WHERE id = ?').run(id).changes === 1;
      })
      .immediate();
  }

  /**
   * Claims the due runs of up to `limit` jobs in one IMMEDIATE transaction: a run row is
   * inserted (unique per job and time, so a second claimer cannot insert it again) and the
   * job moves on to its next run. Another process on the same file waits for the write lock
   * and then sees the jobs already moved on.
   */
  claimDue(
    now: number,
    runner: string,
    leaseMs: number,
    limit: number,
    plan: (job: Job) => ClaimPlan,
    onSkipped: (job: Job, skipped: NonNullable<ClaimPlan['skipped']>) => void,
  ): { job: Job; run: JobRun }[] {
    const claim = this.db.transaction(() => {
      const rows = this.db
        .prepare<[number, number], JobRowDb>('SELECT * FROM jobs WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?')
        .all(now, limit);
      const claimed: { job: Job; run: JobRun }[] = [];
      for (const row of rows) {
        const job = toJob(row);
        const decided = plan(job);
        this.db.prepare('UPDATE jobs SET next_run_at = ?, last_run_at = coalesce(?, last_run_at), updated_at = ? WHERE id = ?').run(decided.next ?? null, decided.fire?.scheduledFor ?? null, now, job.id);
        if (decided.skipped) onSkipped(job, decided.skipped);
        if (!decided.fire) continue;
        const inserted = this.db
          .prepare<[string, number, number, string, number, number], RunRowDb>(
            `INSERT INTO job_runs (job_id, scheduled_for, claimed_at, runner, lease_until, late, status) VALUES (?, ?, ?, ?, ?, ?, 'claimed')
             ON CONFLICT (job_id, scheduled_for) DO NOTHING RETURNING id, job_id, scheduled_for, late, status, runner`,
          )
          .get(job.id, decided.fire.scheduledFor, now, runner, now + leaseMs, decided.fire.late ? 1 : 0);
        if (inserted) claimed.push({ job, run: toRun(inserted) });
      }
      return claimed;
    });
    return claim.immediate();
  }

  /**
   * Runs whose runner is gone (its lease ran out, or `isGone` says its process died), taken
   * over in one transaction by `runner`. A run that was `running` comes back as it was, for
   * the caller to close as interrupted.
   */
  takeOverOrphans(now: number, runner: string, leaseMs: number, isGone: (runner: string) => boolean): JobRun[] {
    const takeOver = this.db.transaction(() => {
      const rows = this.db
        .prepare<[], RunRowDb & { lease_until: number }>("SELECT id, job_id, scheduled_for, late, status, runner, lease_until FROM job_runs WHERE status IN ('claimed', 'running')")
        .all()
        .filter((row) => row.runner !== runner);
      const taken: JobRun[] = [];
      for (const row of rows) {
        if (row.lease_until > now && !isGone(row.runner)) continue;
        this.db.prepare('UPDATE job_runs SET runner = ?, lease_until = ? WHERE id = ?').run(runner, now + leaseMs, row.id);
        taken.push(toRun({ ...row, runner }));
      }
      return taken;
    });
    return takeOver.immediate();
  }

  /** Whether `runner` still holds the run (a runner that stalled past its lease may have lost it to another). */
  private holds(runId: number, runner: string): boolean {
    const row = this.db.prepare<[number], { runner: string; status: RunStatus }>('SELECT runner, status FROM job_runs WHERE id = ?').get(runId);
    return row !== undefined && row.runner === runner && (row.status === 'claimed' || row.status === 'running');
  }

  /** False when the run is no longer this runner's. */
  markRunning(runId: number, runner: string, leaseUntil: number): boolean {
    return this.db.prepare("UPDATE job_runs SET status = 'running', lease_until = ? WHERE id = ? AND runner = ? AND status = 'claimed'").run(leaseUntil, runId, runner).changes === 1;
  }

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
  ): { paused: boolean; failures: number } | undefined {
    return this.db.transaction(() => {
      // Fenced: a runner whose lease ran out (and whose run another runner took over) records nothing.
      if (!this.holds(runId, runner)) return undefined;
      const outboxId = record();
      this.db
        .prepare("UPDATE job_runs SET status = ?, outbox_id = ?, error = ?, finished_at = ? WHERE id = ?")
        .run(outcome.ok ? 'handed' : 'failed', outboxId, outcome.error ?? null, now, runId);
      return this.finish(jobId, now, outcome);
    }).immediate();
  }

  /** Links a note about a run (e.g. "it was cut off") to the run, so its delivery shows with it. */
  linkOutbox(runId: number, outboxId: number): void {
    this.db.prepare('UPDATE job_runs SET outbox_id = ? WHERE id = ?').run(outboxId, runId);
  }

  /** Closes a run that produced nothing to deliver (interrupted, or failed without a note). */
  close(runId: number, runner: string, jobId: string, now: number, status: 'failed' | 'interrupted', error: string, pauseAfter: number): { paused: boolean; failures: number } | undefined {
    return this.db.transaction(() => {
      if (!this.holds(runId, runner)) return undefined;
      this.db.prepare('UPDATE job_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(status, error, now, runId);
      return status === 'failed' ? this.finish(jobId, now, { ok: false, error, pauseAfter }) : { paused: false, failures: 0 };
    }).immediate();
  }

  private finish(jobId: string, now: number, outcome: { ok: boolean; error?: string; pauseAfter: number }): { paused: boolean; failures: number } {
    if (outcome.ok) {
      this.db.prepare("UPDATE jobs SET last_status = 'ok', consecutive_failures = 0, updated_at = ? WHERE id = ?").run(now, jobId);
      return { paused: false, failures: 0 };
    }
    const row = this.db
      .prepare<[string, number, string], { consecutive_failures: number }>(
        'UPDATE jobs SET last_status = ?, consecutive_failures = consecutive_failures + 1, updated_at = ? WHERE id = ? RETURNING consecutive_failures',
      )
      .get(`failed: ${outcome.error ?? 'unknown error'}`, now, jobId);
    const failures = row?.consecutive_failures ?? 0;
    const paused = failures >= outcome.pauseAfter;
    if (paused) this.db.prepare('UPDATE jobs SET enabled = 0 WHERE id = ?').run(jobId);
    return { paused, failures };
  }

  run(runId: number): (JobRun & { outboxId: number | undefined; error: string | undefined }) | undefined {
    const row = this.db
      .prepare<[number], RunRowDb & { outbox_id: number | null; error: string | null }>('SELECT id, job_id, scheduled_for, late, status, runner, outbox_id, error FROM job_runs WHERE id = ?')
      .get(runId);
    return row ? { ...toRun(row), outboxId: row.outbox_id ?? undefined, error: row.error ?? undefined } : undefined;
  }

  /** A job's runs, newest first, with how their delivery went (kept apart from the run's own status). */
  runs(jobId: string, limit = 20): (JobRun & { delivery: 'pending' | 'sent' | 'failed' | undefined })[] {
    return this.db
      .prepare<[string, number], RunRowDb & { delivery: 'pending' | 'sent' | 'failed' | null }>(
        `SELECT r.id, r.job_id, r.scheduled_for, r.late, r.status, r.runner, o.status AS delivery
         FROM job_runs r LEFT JOIN outbox o ON o.id = r.outbox_id WHERE r.job_id = ? ORDER BY r.scheduled_for DESC LIMIT ?`,
      )
      .all(jobId, limit)
      .map((row) => ({ ...toRun(row), delivery: row.delivery ?? undefined }));
  }
}
