/**
 * Jobs on PostgreSQL (the port: ../../jobs.ts). Several hob processes claim from one table:
 * due jobs and orphaned runs are locked with FOR UPDATE SKIP LOCKED, so each process takes
 * rows no other holds and nobody waits; the (job, time) key stops a run being inserted twice.
 */
import { encodeSchedule, toJob, toRun, type ClaimPlan, type Job, type JobRowDb, type JobRun, type RunRowDb, type RunStatus } from '../../job.js';
import type { JobRepository, NewJob } from '../../jobs.js';
import type { Sql } from '../sql.js';

/** The columns as the SQLite rows have them (flags as 0/1), so one mapping serves both stores. */
const JOB = 'id, owner_id, created_by, origin_session, platform, chat_id, thread_id, kind, text, schedule_kind, schedule, timezone, enabled::int AS enabled, next_run_at, last_run_at, last_status, consecutive_failures, created_at';
const RUN = 'id, job_id, scheduled_for, late::int AS late, status, runner';
type Outcome = { ok: boolean; error?: string; pauseAfter: number };

export class PostgresJobs implements JobRepository {
  constructor(private readonly sql: Sql) {}

  create(job: NewJob): Job {
    const schedule = encodeSchedule(job.schedule);
    return toJob(
      this.sql.get<JobRowDb>(
        `INSERT INTO jobs (id, owner_id, created_by, origin_session, platform, chat_id, thread_id, kind, text, schedule_kind, schedule, timezone, enabled, next_run_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true, ?, ?, ?) RETURNING ${JOB}`,
        job.id, job.ownerId, job.createdBy, job.originSession, job.target.platform, job.target.chatId, job.target.threadId ?? null, job.kind, job.text, schedule.kind, schedule.value, job.timezone, job.nextRunAt ?? null, job.createdAt, job.createdAt,
      )!,
    );
  }

  createWithin(job: NewJob, maxLive: number): Job | undefined {
    return this.sql.transaction(() => {
      // One owner's creations queue behind each other, so two processes cannot both take the last place.
      this.sql.run("SELECT pg_advisory_xact_lock(hashtext('hob:jobs:' || ?))", job.ownerId);
      const live = this.sql.get<{ n: number }>('SELECT count(*) AS n FROM jobs WHERE owner_id = ? AND (NOT enabled OR next_run_at IS NOT NULL)', job.ownerId)?.n ?? 0;
      return live >= maxLive ? undefined : this.create(job);
    });
  }

  get(id: string): Job | undefined {
    const row = this.sql.get<JobRowDb>(`SELECT ${JOB} FROM jobs WHERE id = ?`, id);
    return row ? toJob(row) : undefined;
  }

  list(ownerId?: string): Job[] {
    const order = 'ORDER BY next_run_at IS NULL, next_run_at, created_at';
    const rows = ownerId === undefined ? this.sql.all<JobRowDb>(`SELECT ${JOB} FROM jobs ${order}`) : this.sql.all<JobRowDb>(`SELECT ${JOB} FROM jobs WHERE owner_id = ? ${order}`, ownerId);
    return rows.map(toJob);
  }

  nextDue(): number | undefined {
    return this.sql.get<{ due: number | null }>('SELECT min(next_run_at) due FROM jobs WHERE enabled AND next_run_at IS NOT NULL')?.due ?? undefined;
  }

  save(job: Job, now: number): void {
    const schedule = encodeSchedule(job.schedule);
    this.sql.run(
      `UPDATE jobs SET text = ?, schedule_kind = ?, schedule = ?, timezone = ?, enabled = ?, next_run_at = ?, consecutive_failures = ?, platform = ?, chat_id = ?, thread_id = ?, updated_at = ? WHERE id = ?`,
      job.text, schedule.kind, schedule.value, job.timezone, job.enabled, job.nextRunAt ?? null, job.consecutiveFailures, job.target.platform, job.target.chatId, job.target.threadId ?? null, now, job.id,
    );
  }

  delete(id: string): boolean {
    return this.sql.transaction(() => {
      this.sql.run('DELETE FROM job_runs WHERE job_id = ?', id);
      return this.sql.run('DELETE FROM jobs WHERE id = ?', id) === 1;
    });
  }

  claimDue(now: number, runner: string, leaseMs: number, limit: number, plan: (job: Job) => ClaimPlan, onSkipped: (job: Job, skipped: NonNullable<ClaimPlan['skipped']>) => void): { job: Job; run: JobRun }[] {
    return this.sql.transaction(() => {
      const rows = this.sql.all<JobRowDb>(`SELECT ${JOB} FROM jobs WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ? FOR UPDATE SKIP LOCKED`, now, limit);
      const claimed: { job: Job; run: JobRun }[] = [];
      for (const row of rows) {
        const job = toJob(row);
        const decided = plan(job);
        this.sql.run('UPDATE jobs SET next_run_at = ?, last_run_at = coalesce(?, last_run_at), updated_at = ? WHERE id = ?', decided.next ?? null, decided.fire?.scheduledFor ?? null, now, job.id);
        if (decided.skipped) onSkipped(job, decided.skipped);
        if (!decided.fire) continue;
        const inserted = this.sql.get<RunRowDb>(
          `INSERT INTO job_runs (job_id, scheduled_for, claimed_at, runner, lease_until, late, status) VALUES (?, ?, ?, ?, ?, ?, 'claimed')
           ON CONFLICT (job_id, scheduled_for) DO NOTHING RETURNING ${RUN}`,
          job.id, decided.fire.scheduledFor, now, runner, now + leaseMs, decided.fire.late,
        );
        if (inserted) claimed.push({ job, run: toRun(inserted) });
      }
      return claimed;
    });
  }

  takeOverOrphans(now: number, runner: string, leaseMs: number, isGone: (runner: string) => boolean): JobRun[] {
    return this.sql.transaction(() => {
      const rows = this.sql.all<RunRowDb & { lease_until: number }>(`SELECT ${RUN}, lease_until FROM job_runs WHERE status IN ('claimed', 'running') AND runner <> ? FOR UPDATE SKIP LOCKED`, runner);
      const taken: JobRun[] = [];
      for (const row of rows) {
        if (row.lease_until > now && !isGone(row.runner)) continue;
        this.sql.run('UPDATE job_runs SET runner = ?, lease_until = ? WHERE id = ?', runner, now + leaseMs, row.id);
        taken.push(toRun({ ...row, runner }));
      }
      return taken;
    });
  }

  /** Whether `runner` still holds the run; the row stays locked until the caller's transaction ends. */
  private holds(runId: number, runner: string): boolean {
    const row = this.sql.get<{ runner: string; status: RunStatus }>('SELECT runner, status FROM job_runs WHERE id = ? FOR UPDATE', runId);
    return row !== undefined && row.runner === runner && (row.status === 'claimed' || row.status === 'running');
  }

  markRunning(runId: number, runner: string, leaseUntil: number): boolean {
    return this.sql.run("UPDATE job_runs SET status = 'running', lease_until = ? WHERE id = ? AND runner = ? AND status = 'claimed'", leaseUntil, runId, runner) === 1;
  }

  handOver(runId: number, runner: string, jobId: string, now: number, record: () => number, outcome: Outcome): { paused: boolean; failures: number } | undefined {
    return this.sql.transaction(() => {
      if (!this.holds(runId, runner)) return undefined;
      const outboxId = record();
      this.sql.run('UPDATE job_runs SET status = ?, outbox_id = ?, error = ?, finished_at = ? WHERE id = ?', outcome.ok ? 'handed' : 'failed', outboxId, outcome.error ?? null, now, runId);
      return this.finish(jobId, now, outcome);
    });
  }

  linkOutbox(runId: number, outboxId: number): void {
    this.sql.run('UPDATE job_runs SET outbox_id = ? WHERE id = ?', outboxId, runId);
  }

  close(runId: number, runner: string, jobId: string, now: number, status: 'failed' | 'interrupted', error: string, pauseAfter: number): { paused: boolean; failures: number } | undefined {
    return this.sql.transaction(() => {
      if (!this.holds(runId, runner)) return undefined;
      this.sql.run('UPDATE job_runs SET status = ?, error = ?, finished_at = ? WHERE id = ?', status, error, now, runId);
      return status === 'failed' ? this.finish(jobId, now, { ok: false, error, pauseAfter }) : { paused: false, failures: 0 };
    });
  }

  private finish(jobId: string, now: number, outcome: Outcome): { paused: boolean; failures: number } {
    if (outcome.ok) {
      this.sql.run("UPDATE jobs SET last_status = 'ok', consecutive_failures = 0, updated_at = ? WHERE id = ?", now, jobId);
      return { paused: false, failures: 0 };
    }
    const failures = this.sql.get<{ consecutive_failures: number }>('UPDATE jobs SET last_status = ?, consecutive_failures = consecutive_failures + 1, updated_at = ? WHERE id = ? RETURNING consecutive_failures', `failed: ${outcome.error ?? 'unknown error'}`, now, jobId)?.consecutive_failures ?? 0;
    const paused = failures >= outcome.pauseAfter;
    if (paused) this.sql.run('UPDATE jobs SET enabled = false WHERE id = ?', jobId);
    return { paused, failures };
  }

  run(runId: number): (JobRun & { outboxId: number | undefined; error: string | undefined }) | undefined {
    const row = this.sql.get<RunRowDb & { outbox_id: number | null; error: string | null }>(`SELECT ${RUN}, outbox_id, error FROM job_runs WHERE id = ?`, runId);
    return row ? { ...toRun(row), outboxId: row.outbox_id ?? undefined, error: row.error ?? undefined } : undefined;
  }

  runs(jobId: string, limit = 20): (JobRun & { delivery: 'pending' | 'sent' | 'failed' | undefined })[] {
    return this.sql
      .all<RunRowDb & { delivery: 'pending' | 'sent' | 'failed' | null }>(
        `SELECT r.id, r.job_id, r.scheduled_for, r.late::int AS late, r.status, r.runner, o.status AS delivery
         FROM job_runs r LEFT JOIN outbox o ON o.id = r.outbox_id WHERE r.job_id = ? ORDER BY r.scheduled_for DESC LIMIT ?`,
        jobId, limit,
      )
      .map((row) => ({ ...toRun(row), delivery: row.delivery ?? undefined }));
  }
}
