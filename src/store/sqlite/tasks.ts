/** Background tasks and workers on SQLite (the port: ../tasks.ts). One process writes at a time, so a claim is one IMMEDIATE transaction. */
import { isOrphaned, TASK_COLUMNS, toTask, type NewTask, type TaskClaim, type TaskEnd, type TaskKind, type TaskRepository, type TaskRow, type TaskRowDb, type TaskSpend, type TaskTotals } from '../tasks.js';
import type { Db } from './db.js';

const OPEN = "status IN ('queued', 'running')";

export class SqliteTasks implements TaskRepository {
  constructor(readonly db: Db) {}

  insert(task: NewTask, claim?: TaskClaim): TaskRow {
    this.db
      .prepare(
        `INSERT INTO tasks (id, kind, person_id, user_id, origin_session, platform, chat_id, thread_id, agent, description, prompt, status, runner, lease_until, created_at, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        task.id, task.kind, task.personId, task.userId, task.originSession, task.platform, task.chatId, task.threadId ?? null, task.agent ?? null, task.description, task.prompt,
        claim ? 'running' : 'queued', claim?.runner ?? null, claim?.leaseUntil ?? null, task.createdAt, claim ? task.createdAt : null,
      );
    return this.get(task.id) as TaskRow;
  }

  get(id: string): TaskRow | undefined {
    const row = this.db.prepare<[string], TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`).get(id);
    return row ? toTask(row) : undefined;
  }

  getFor(id: string, personId: string): TaskRow | undefined {
    const row = this.db.prepare<[string, string], TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ? AND person_id = ?`).get(id, personId);
    return row ? toTask(row) : undefined;
  }

  listFor(personId: string, limit = 20): TaskRow[] {
    return this.db
      .prepare<[string, number], TaskRowDb>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE person_id = ? AND kind = 'task'
         ORDER BY CASE WHEN ${OPEN} THEN 0 ELSE 1 END, created_at DESC, id LIMIT ?`,
      )
      .all(personId, limit)
      .map(toTask);
  }

  openCount(personId: string, kind: TaskKind): number {
    return this.db.prepare<[string, string], { n: number }>(`SELECT count(*) AS n FROM tasks WHERE person_id = ? AND kind = ? AND ${OPEN}`).get(personId, kind)?.n ?? 0;
  }

  open(kind: TaskKind): TaskRow[] {
    return this.db.prepare<[string], TaskRowDb>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE kind = ? AND ${OPEN} ORDER BY created_at, id`).all(kind).map(toTask);
  }

  markRunning(id: string, claim: TaskClaim, now: number): boolean {
    return (
      this.db
        .prepare("UPDATE tasks SET status = 'running', runner = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ? AND (status = 'queued' OR (status = 'running' AND runner IS ?))")
        .run(claim.runner, claim.leaseUntil ?? null, now, id, claim.runner).changes === 1
    );
  }

  claimOrphans(kind: TaskKind, claim: TaskClaim, now: number, isGone: (runner: string) => boolean): TaskRow[] {
    return this.db
      .transaction(() => {
        const taken: TaskRow[] = [];
        for (const row of this.open(kind)) {
          if (!isOrphaned(row, claim.runner, now, isGone)) continue;
          this.db.prepare("UPDATE tasks SET status = 'running', runner = ?, lease_until = ?, started_at = coalesce(started_at, ?) WHERE id = ?").run(claim.runner, claim.leaseUntil ?? null, now, row.id);
          taken.push({ ...row, status: 'running', runner: claim.runner, leaseUntil: claim.leaseUntil, startedAt: row.startedAt ?? now });
        }
        return taken;
      })
      .immediate();
  }

  renew(runner: string, leaseUntil: number): string[] {
    return this.db
      .prepare<[number, string], { id: string }>("UPDATE tasks SET lease_until = ? WHERE runner = ? AND status = 'running' RETURNING id")
      .all(leaseUntil, runner)
      .map((row) => row.id);
  }

  recordSpend(id: string, spend: TaskSpend): void {
    this.db
      .prepare(`UPDATE tasks SET tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ? WHERE id = ? AND ${OPEN}`)
      .run(spend.toolUses, spend.inputTokens, spend.outputTokens, spend.costUsd, id);
  }

  finish(id: string, end: TaskEnd, now: number, deliver?: (row: TaskRow) => number | undefined): boolean {
    return this.db
      .transaction(() => {
        const changed = this.db
          .prepare(
            `UPDATE tasks SET status = ?, result = ?, error = ?, tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ?
             WHERE id = ? AND ${OPEN}`,
          )
          .run(end.status, end.result ?? null, end.error ?? null, end.toolUses, end.inputTokens, end.outputTokens, end.costUsd, now, id).changes;
        if (changed !== 1) return false;
        const outboxId = deliver?.(this.get(id) as TaskRow);
        if (outboxId !== undefined) this.db.prepare('UPDATE tasks SET outbox_id = ? WHERE id = ?').run(outboxId, id);
        return true;
      })
      .immediate();
  }

  unnoted(originSession: string): TaskRow[] {
    return this.db
      .prepare<[string], TaskRowDb>(
        `SELECT ${TASK_COLUMNS} FROM tasks WHERE origin_session = ? AND kind = 'task' AND noted_at IS NULL AND status IN ('completed', 'failed', 'stopped', 'interrupted')
         ORDER BY finished_at, id`,
      )
      .all(originSession)
      .map(toTask);
  }

  markNoted(ids: readonly string[], now: number): void {
    const statement = this.db.prepare('UPDATE tasks SET noted_at = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) statement.run(now, id);
    })();
  }

  spentBy(personId: string, since = 0): TaskTotals {
    const row = this.db
      .prepare<[string, number], { [K in 'tasks' | 'workers' | 'tool_uses' | 'input_tokens' | 'output_tokens' | 'cost_usd']: number | null }>(
        `SELECT sum(kind = 'task') AS tasks, sum(kind = 'worker') AS workers, sum(tool_uses) AS tool_uses, sum(input_tokens) AS input_tokens,
                sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
         FROM tasks WHERE person_id = ? AND created_at >= ?`,
      )
      .get(personId, since);
    return {
      tasks: row?.tasks ?? 0,
      workers: row?.workers ?? 0,
      toolUses: row?.tool_uses ?? 0,
      inputTokens: row?.input_tokens ?? 0,
      outputTokens: row?.output_tokens ?? 0,
      costUsd: row?.cost_usd ?? 0,
    };
  }
}
