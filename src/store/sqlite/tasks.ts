import type { Db } from './db.js';

/** A background task (`/bg`, task_create) or a worker (one `agent` call). */
export type TaskKind = 'task' | 'worker';

/** queued → running → one of the ends; `interrupted` when hob stopped and it could not be resumed. */
export type TaskStatus = 'queued' | 'running' | 'completed' | 'failed' | 'stopped' | 'interrupted';

export const FINISHED_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'stopped', 'interrupted'];

export type TaskRow = {
  id: string;
  kind: TaskKind;
  /** The person it belongs to: only they see it, stop it or read its output. */
  personId: string;
  /** Their platform identity that started it (the run acts as them). */
  userId: string;
  /** The conversation it came from: its result and notification go back there. */
  originSession: string;
  platform: string;
  chatId: string;
  threadId: string | undefined;
  /** The agent definition it runs as, if any. */
  agent: string | undefined;
  description: string;
  prompt: string;
  status: TaskStatus;
  runner: string | undefined;
  result: string | undefined;
  error: string | undefined;
  toolUses: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** The outbox row that carried its result to the chat (set once, in the same write as the end). */
  outboxId: number | undefined;
  createdAt: number;
  startedAt: number | undefined;
  finishedAt: number | undefined;
};

export type NewTask = Pick<TaskRow, 'id' | 'kind' | 'personId' | 'userId' | 'originSession' | 'platform' | 'chatId' | 'threadId' | 'agent' | 'description' | 'prompt' | 'createdAt'>;

/** What a run has spent so far. */
export type TaskSpend = { toolUses: number; inputTokens: number; outputTokens: number; costUsd: number };

/** How a task ended. */
export type TaskEnd = TaskSpend & { status: Extract<TaskStatus, 'completed' | 'failed' | 'stopped' | 'interrupted'>; result?: string; error?: string };

type Raw = {
  id: string; kind: TaskKind; person_id: string; user_id: string; origin_session: string; platform: string; chat_id: string; thread_id: string | null; agent: string | null;
  description: string; prompt: string; status: TaskStatus; runner: string | null; result: string | null; error: string | null; tool_uses: number; input_tokens: number;
  output_tokens: number; cost_usd: number; outbox_id: number | null; created_at: number; started_at: number | null; finished_at: number | null; noted_at: number | null;
};

const fromRaw = (row: Raw): TaskRow => ({
  id: row.id,
  kind: row.kind,
  personId: row.person_id,
  userId: row.user_id,
  originSession: row.origin_session,
  platform: row.platform,
  chatId: row.chat_id,
  threadId: row.thread_id ?? undefined,
  agent: row.agent ?? undefined,
  description: row.description,
  prompt: row.prompt,
  status: row.status,
  runner: row.runner ?? undefined,
  result: row.result ?? undefined,
  error: row.error ?? undefined,
  toolUses: row.tool_uses,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  costUsd: row.cost_usd,
  outboxId: row.outbox_id ?? undefined,
  createdAt: row.created_at,
  startedAt: row.started_at ?? undefined,
  finishedAt: row.finished_at ?? undefined,
});

/**
 * Background tasks and workers. Every method is synchronous and one statement or one
 * transaction: a task ends once (`finish` changes only an open row), and its result's
 * delivery is recorded in that same transaction, so a crash can neither lose nor double it.
 * Lookups a person makes go through `getFor`/`listFor`, which see only their own rows.
 */
export class TaskRepository {
  constructor(readonly db: Db) {}

  insert(task: NewTask): TaskRow {
    this.db
      .prepare(
        `INSERT INTO tasks (id, kind, person_id, user_id, origin_session, platform, chat_id, thread_id, agent, description, prompt, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
      )
      .run(task.id, task.kind, task.personId, task.userId, task.originSession, task.platform, task.chatId, task.threadId ?? null, task.agent ?? null, task.description, task.prompt, task.createdAt);
    return this.get(task.id) as TaskRow;
  }

  /** Any row, by id: for hob itself (resuming, delivering), never for a person's lookup. */
  get(id: string): TaskRow | undefined {
    const row = this.db.prepare<[string], Raw>('SELECT * FROM tasks WHERE id = ?').get(id);
    return row ? fromRaw(row) : undefined;
  }

  /** The row when it is this person's; another person's id finds nothing, as an unknown one does. */
  getFor(id: string, personId: string): TaskRow | undefined {
    const row = this.db.prepare<[string, string], Raw>('SELECT * FROM tasks WHERE id = ? AND person_id = ?').get(id, personId);
    return row ? fromRaw(row) : undefined;
  }

  /** This person's tasks (not workers), open ones first, then the newest. */
  listFor(personId: string, limit = 20): TaskRow[] {
    return this.db
      .prepare<[string, number], Raw>(
        `SELECT * FROM tasks WHERE person_id = ? AND kind = 'task'
         ORDER BY CASE WHEN status IN ('queued', 'running') THEN 0 ELSE 1 END, created_at DESC, id LIMIT ?`,
      )
      .all(personId, limit)
      .map(fromRaw);
  }

  /** How many of this person's rows of this kind are queued or running. */
  openCount(personId: string, kind: TaskKind): number {
    const row = this.db.prepare<[string, string], { n: number }>("SELECT count(*) AS n FROM tasks WHERE person_id = ? AND kind = ? AND status IN ('queued', 'running')").get(personId, kind);
    return row?.n ?? 0;
  }

  /** Every open row of this kind, oldest first (after a restart: what to resume or report). */
  open(kind: TaskKind): TaskRow[] {
    return this.db
      .prepare<[string], Raw>("SELECT * FROM tasks WHERE kind = ? AND status IN ('queued', 'running') ORDER BY created_at, id")
      .all(kind)
      .map(fromRaw);
  }

  /** Marks a queued (or taken-over) row running for this runner. False when it already ended. */
  markRunning(id: string, runner: string, now: number): boolean {
    return (
      this.db
        .prepare("UPDATE tasks SET status = 'running', runner = ?, started_at = coalesce(started_at, ?) WHERE id = ? AND status IN ('queued', 'running')")
        .run(runner, now, id).changes === 1
    );
  }

  /** What the run has spent so far (after each model request and tool call). */
  recordSpend(id: string, spend: TaskSpend): void {
    this.db
      .prepare("UPDATE tasks SET tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ? WHERE id = ? AND status IN ('queued', 'running')")
      .run(spend.toolUses, spend.inputTokens, spend.outputTokens, spend.costUsd, id);
  }

  /**
   * Ends an open row, and in the same transaction records its delivery (`deliver` returns the
   * outbox id, or undefined when nothing is sent). False, and nothing recorded, when the row
   * had already ended: a task ends, and its result is delivered, once.
   */
  finish(id: string, end: TaskEnd, now: number, deliver?: (row: TaskRow) => number | undefined): boolean {
    return this.db
      .transaction(() => {
        const changed = this.db
          .prepare(
            `UPDATE tasks SET status = ?, result = ?, error = ?, tool_uses = ?, input_tokens = ?, output_tokens = ?, cost_usd = ?, finished_at = ?
             WHERE id = ? AND status IN ('queued', 'running')`,
          )
          .run(end.status, end.result ?? null, end.error ?? null, end.toolUses, end.inputTokens, end.outputTokens, end.costUsd, now, id).changes;
        if (changed !== 1) return false;
        const row = this.get(id) as TaskRow;
        const outboxId = deliver?.(row);
        if (outboxId !== undefined) this.db.prepare('UPDATE tasks SET outbox_id = ? WHERE id = ?').run(outboxId, id);
        return true;
      })
      .immediate();
  }

  /** Tasks from this conversation that ended and whose notification its history has not had yet, oldest first. */
  unnoted(originSession: string): TaskRow[] {
    return this.db
      .prepare<[string], Raw>(
        `SELECT * FROM tasks WHERE origin_session = ? AND kind = 'task' AND noted_at IS NULL AND status IN ('completed', 'failed', 'stopped', 'interrupted')
         ORDER BY finished_at, id`,
      )
      .all(originSession)
      .map(fromRaw);
  }

  /** The conversation's history has these tasks' notifications now. */
  markNoted(ids: readonly string[], now: number): void {
    const statement = this.db.prepare('UPDATE tasks SET noted_at = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) statement.run(now, id);
    })();
  }

  /** What this person's tasks and workers have spent since `since` (for /usage). */
  spentBy(personId: string, since = 0): TaskSpend & { tasks: number; workers: number } {
    const row = this.db
      .prepare<[string, number], { tasks: number | null; workers: number | null; tool_uses: number | null; input_tokens: number | null; output_tokens: number | null; cost_usd: number | null }>(
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
