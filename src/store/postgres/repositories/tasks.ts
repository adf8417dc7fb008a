/**
 * Background tasks and workers on PostgreSQL (the port: ../../tasks.ts). Several hob
 * processes claim from one table: open rows are locked with FOR UPDATE SKIP LOCKED, so each
 * process takes rows no other holds, nobody waits, and a task is run or resumed by one process.
 */
import { isOrphaned, TASK_COLUMNS, toTask, type NewTask, type TaskClaim, type TaskEnd, type TaskKind, type TaskRepository, type TaskRow, type TaskRowDb, type TaskSpend, type TaskTotals } from '../../tasks.js';
import type { Sql } from '../sql.js';

const OPEN = "status IN ('queued', 'running')";

export class PostgresTasks implements TaskRepository {
  constructor(private readonly sql: Sql) {}

  insert(task: NewTask, claim?: TaskClaim): TaskRow {
    return toTask(
      this.sql.get<TaskRowDb>(
        `INSERT INTO tasks (id, kind, person_id, user_id, origin_session, platform, chat_id, thread_id, agent, description, prompt, status, runner, lease_until, created_at, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${TASK_COLUMNS}`,
        task.id, task.kind, task.personId, task.userId, task.originSession, task.platform, task.chatId, task.threadId ?? null, task.agent ?? null, task.description, task.prompt,
        claim ? 'running' : 'queued', claim?.runner ?? null, claim?.leaseUntil ?? null, task.createdAt, claim ? task.createdAt : null,
      )!,
    );
  }

  get(id: string): TaskRow | undefined {
    const row = this.sql.get<TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`, id);
    return row ? toTask(row) : undefined;
  }

  getFor(id: string, personId: string): TaskRow | undefined {
    const row = this.sql.get<TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ? AND person_id = ?`, id, personId);
    return row ? toTask(row) : undefined;
  }

  listFor(personId: string, limit = 20): TaskRow[] {
    return this.sql
      .all<TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE person_id = ? AND kind = 'task' ORDER BY CASE WHEN ${OPEN} THEN 0 ELSE 1 END, created_at DESC, id LIMIT ?`, personId, limit)
      .map(toTask);
  }

  openCount(personId: string, kind: TaskKind): number {
    return this.sql.get<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE person_id = ? AND kind = ? AND ${OPEN}`, personId, kind)?.n ?? 0;
  }

  open(kind: TaskKind): TaskRow[] {
    return this.sql.all<TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE kind = ? AND ${OPEN} ORDER BY created_at, id`, kind).map(toTask);
  }

  markRunning(id: string, claim: TaskClaim, now: number): boolean {
    return (
      this.sql.run(
        "UPDATE tasks SET status = 'running', runner = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ? AND (status = 'queued' OR (status = 'running' AND runner = ?))",
        claim.runner, claim.leaseUntil ?? null, now, id, claim.runner,
      ) === 1
    );
  }

  claimOrphans(kind: TaskKind, claim: TaskClaim, now: number, isGone: (runner: string) => boolean): TaskRow[] {
    return this.sql.transaction(() => {
      // Rows another process is claiming or finishing right now are skipped, not waited for: they are not orphans.
      const rows = this.sql.all<TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE kind = ? AND ${OPEN} ORDER BY created_at, id FOR UPDATE SKIP LOCKED`, kind).map(toTask);
      const taken: TaskRow[] = [];
      for (const row of rows) {
        if (!isOrphaned(row, claim.runner, now, isGone)) continue;
        this.sql.run("UPDATE tasks SET status = 'running', runner = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ?", claim.runner, claim.leaseUntil ?? null, now, row.id);
        taken.push({ ...row, status: 'running', runner: claim.runner, leaseUntil: claim.leaseUntil, startedAt: row.startedAt ?? now });
      }
      return taken;
    });
  }

  renew(runner: string, leaseUntil: number): string[] {
    return this.sql.all<{ id: string }>("UPDATE tasks SET lease_until = ? WHERE runner = ? AND status = 'running' RETURNING id", leaseUntil, runner).map((row) => row.id);
  }

  recordSpend(id: string, spend: TaskSpend): void {
    this.sql.run(`UPDATE tasks SET tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ? WHERE id = ? AND ${OPEN}`, spend.toolUses, spend.inputTokens, spend.outputTokens, spend.costUsd, id);
  }

  finish(id: string, end: TaskEnd, now: number, deliver?: (row: TaskRow) => number | undefined): boolean {
    return this.sql.transaction(() => {
      const row = this.sql.get<TaskRowDb>(
        `UPDATE tasks SET status = ?, result = ?, error = ?, tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ?
         WHERE id = ? AND ${OPEN} RETURNING ${TASK_COLUMNS}`,
        end.status, end.result ?? null, end.error ?? null, end.toolUses, end.inputTokens, end.outputTokens, end.costUsd, now, id,
      );
      if (!row) return false;
      const outboxId = deliver?.(toTask(row));
      if (outboxId !== undefined) this.sql.run('UPDATE tasks SET outbox_id = ? WHERE id = ?', outboxId, id);
      return true;
    });
  }

  unnoted(originSession: string): TaskRow[] {
    return this.sql
      .all<TaskRowDb>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE origin_session = ? AND kind = 'task' AND noted_at IS NULL AND status IN ('completed', 'failed', 'stopped', 'interrupted') ORDER BY finished_at, id`,
        originSession,
      )
      .map(toTask);
  }

  markNoted(ids: readonly string[], now: number): void {
    if (ids.length) this.sql.run('UPDATE tasks SET noted_at = ? WHERE id = ANY(?::text[])', now, [...ids]);
  }

  spentBy(personId: string, since = 0): TaskTotals {
    const row = this.sql.get<{ [K in 'tasks' | 'workers' | 'tool_uses' | 'input_tokens' | 'output_tokens' | 'cost_usd']: number | null }>(
      `SELECT count(*) FILTER (WHERE kind = 'task')::int AS tasks, count(*) FILTER (WHERE kind = 'worker')::int AS workers, sum(tool_uses)::bigint AS tool_uses,
              sum(input_tokens)::bigint AS input_tokens, sum(output_tokens)::bigint AS output_tokens, sum(cost_usd) AS cost_usd
       FROM tasks WHERE person_id = ? AND created_at >= ?`,
      personId, since,
    );
    return {
      tasks: row?.tasks ?? 0,
      workers: row?.workers ?? 0,
      toolUses: Number(row?.tool_uses ?? 0),
      inputTokens: Number(row?.input_tokens ?? 0),
      outputTokens: Number(row?.output_tokens ?? 0),
      costUsd: row?.cost_usd ?? 0,
    };
  }
}
