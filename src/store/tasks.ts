/**
 * Background tasks and workers in the Store port. A task is held by one runner (a process)
 * at a time: claims are single writes (FOR UPDATE SKIP LOCKED on PostgreSQL), so several
 * processes on one database never run or resume the same task twice.
 */

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
  /** The process holding it (host:pid:random), while it runs. */
  runner: string | undefined;
  /** Until when `runner`'s claim holds unless renewed; undefined: for as long as its process lives (one process on one file). */
  leaseUntil: number | undefined;
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

/** A runner's hold on a row: who, and until when (undefined: while its process lives). */
export type TaskClaim = { runner: string; leaseUntil: number | undefined };

/** What `spentBy` sums. */
export type TaskTotals = TaskSpend & { tasks: number; workers: number };

/**
 * Background tasks and workers. Every method is one statement or one transaction: a task is
 * claimed by one runner, ends once (`finish` changes only an open row), and its result's
 * delivery is recorded in that same transaction, so a crash can neither lose nor double it.
 * Lookups a person makes go through `getFor`/`listFor`, which see only their own rows.
 */
export interface TaskRepository {
  /** Records a task: queued, or already running for `claim` (so no other process can take it between the two). */
  insert(task: NewTask, claim?: TaskClaim): TaskRow;
  /** Any row, by id: for hob itself (resuming, delivering), never for a person's lookup. */
  get(id: string): TaskRow | undefined;
  /** The row when it is this person's; another person's id finds nothing, as an unknown one does. */
  getFor(id: string, personId: string): TaskRow | undefined;
  /** This person's tasks (not workers), open ones first, then the newest. */
  listFor(personId: string, limit?: number): TaskRow[];
  /** How many of this person's rows of this kind are queued or running. */
  openCount(personId: string, kind: TaskKind): number;
  /** Every open row of this kind, oldest first. */
  open(kind: TaskKind): TaskRow[];
  /**
   * Marks a queued row, or one this runner already holds, running for `claim`. False when it
   * ended or another runner holds it (that runner runs it; taking over is `claimOrphans`).
   */
  markRunning(id: string, claim: TaskClaim, now: number): boolean;
  /**
   * Takes, in one write transaction, the open rows of this kind that no live runner holds: queued
   * ones, and running ones whose runner is this one, has no claim, let its lease run out, or
   * (`isGone`) whose process died. Each comes back held by `claim`. Two processes claiming at
   * once never take the same row.
   */
  claimOrphans(kind: TaskKind, claim: TaskClaim, now: number, isGone: (runner: string) => boolean): TaskRow[];
  /**
   * Extends the lease of every open row `runner` holds to `leaseUntil`, and returns their ids:
   * a row this runner runs that is missing was ended (or taken over) elsewhere.
   */
  renew(runner: string, leaseUntil: number): string[];
  /** What the run has spent so far (after each model request and tool call). */
  recordSpend(id: string, spend: TaskSpend): void;
  /**
   * Ends an open row, and in the same transaction records its delivery (`deliver` returns the
   * outbox id, or undefined when nothing is sent). False, and nothing recorded, when the row
   * had already ended: a task ends, and its result is delivered, once.
   */
  finish(id: string, end: TaskEnd, now: number, deliver?: (row: TaskRow) => number | undefined): boolean;
  /** Tasks from this conversation that ended and whose notification its history has not had yet, oldest first. */
  unnoted(originSession: string): TaskRow[];
  /** The conversation's history has these tasks' notifications now. */
  markNoted(ids: readonly string[], now: number): void;
  /** What this person's tasks and workers have spent since `since` (for /usage). */
  spentBy(personId: string, since?: number): TaskTotals;
}

/** A tasks row as both stores return it (snake_case columns, nulls). */
export type TaskRowDb = {
  id: string; kind: TaskKind; person_id: string; user_id: string; origin_session: string; platform: string; chat_id: string; thread_id: string | null; agent: string | null;
  description: string; prompt: string; status: TaskStatus; runner: string | null; lease_until: number | null; result: string | null; error: string | null; tool_uses: number; input_tokens: number;
  output_tokens: number; cost_usd: number; outbox_id: number | null; created_at: number; started_at: number | null; finished_at: number | null;
};

export const toTask = (row: TaskRowDb): TaskRow => ({
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
  leaseUntil: row.lease_until ?? undefined,
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

/** Whether a running row is free to take over for `runner` (see claimOrphans). */
export function isOrphaned(row: Pick<TaskRow, 'status' | 'runner' | 'leaseUntil'>, runner: string, now: number, isGone: (runner: string) => boolean): boolean {
  if (row.status === 'queued') return true;
  if (row.status !== 'running') return false;
  if (!row.runner || row.runner === runner) return true;
  return (row.leaseUntil !== undefined && row.leaseUntil <= now) || isGone(row.runner);
}

/** The columns the tasks queries read, shared by both stores (SQL text). */
export const TASK_COLUMNS =
  'id, kind, person_id, user_id, origin_session, platform, chat_id, thread_id, agent, description, prompt, status, runner, lease_until, result, error, tool_uses, input_tokens, output_tokens, cost_usd, outbox_id, created_at, started_at, finished_at';
