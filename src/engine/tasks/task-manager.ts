/**
 * Background tasks: headless runs apart from the conversation that started them (`/bg`,
 * task_create), so the chat stays free. Each is a row (store/tasks.ts) and a session of its
 * own; when one ends, its end and its message to the chat are recorded in one transaction
 * (delivered through the outbox, once), and the conversation's next message carries a
 * `<task-notification>`. After a restart each open task is resumed from its stored history,
 * or reported as interrupted with what it had. A person sees and stops only their own.
 *
 * Several processes on one database (`lease`): each task is claimed by one process, whose
 * claim lasts a lease it renews; when a process dies, another takes its tasks over once the
 * lease runs out and resumes them, so a task is run and its result delivered once.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import type { PersonResolver } from '../../core/person.js';
import { newRunnerId, runnerIsGone } from '../../core/runner-id.js';
import { SHUTDOWN_REASON } from '../../core/shutdown.js';
import type { Logger } from '../../logger.js';
import { encodeOutboxMessage } from '../../store/outbox-message.js';
import type { OutboxRepository } from '../../store/outbox.js';
import type { TaskClaim, TaskEnd, TaskRepository, TaskRow } from '../../store/tasks.js';
import type { ChatOrigin } from '../../tools/tool.js';
import type { QueryEngine } from '../query-engine.js';
import { taskEndMessage, taskNotification, taskSessionKey } from './notification.js';
import { runTask, STOPPED_BY_PERSON, TIME_LIMIT } from './task-run.js';

/** config `tasks:` */
export type TaskSettings = {
  /** Tasks one person may have queued or running at once. */
  maxRunning: number;
  timeoutSeconds: number;
  /** Tokens (in + out) one task may spend. */
  maxTokens: number;
};

export type TaskManagerDeps = {
  tasks: TaskRepository;
  outbox: OutboxRepository;
  /** A headless engine on the task's own session. */
  engine(sessionKey: string): QueryEngine;
  people: PersonResolver;
  clock: Clock;
  logger: Logger;
  settings: TaskSettings;
  runnerId?: string;
  /**
   * Set when other processes share the database: claims last `ms` and are renewed every
   * ms/3, and at each renewal tasks whose process died (lease run out) are taken over. Unset
   * (one process on one file): a claim lasts as long as its process, and nothing runs on a timer.
   */
  lease?: { ms: number };
  /** Whether a runner's process is gone (default: a dead pid on this host). */
  isGone?(runner: string): boolean;
};

export type NewTaskRequest = { prompt: string; description?: string; userId: string; sessionKey: string; chat: ChatOrigin };

export type StopOutcome = 'stopping' | 'stopped' | 'finished' | 'not_found';

type Running = { controller: AbortController; done: Promise<void>; said: string };

/** Several processes: how a Stop given here reaches the process that runs the task. */
export type TaskNotices = { taskStopped(taskId: string): void };

export class TaskManager {
  readonly runnerId: string;
  private readonly running = new Map<string, Running>();
  private started = false;
  private kick: () => void = () => undefined;
  private isTrusted: (platform: string, userId: string) => boolean = (platform) => platform === 'console';
  private sweeper: NodeJS.Timeout | undefined;
  private notices: TaskNotices | undefined;

  constructor(private readonly deps: TaskManagerDeps) {
    this.runnerId = deps.runnerId ?? newRunnerId();
  }

  /**
   * Starts running tasks: `kick` asks the delivery worker to send what was recorded. Open
   * tasks a previous process left (its runner gone) are resumed or reported, each once.
   */
  start(options: { kick(): void; isTrusted?(platform: string, userId: string): boolean }): void {
    this.kick = options.kick;
    if (options.isTrusted) this.isTrusted = options.isTrusted;
    this.started = true;
    this.takeOver();
    const { lease } = this.deps;
    if (lease) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(100, Math.floor(lease.ms / 3)));
      this.sweeper.unref();
    }
  }

  /** Several processes on one database: a Stop of a task another process runs is told through `notices`. */
  announceTo(notices: TaskNotices): void {
    this.notices = notices;
  }

  /**
   * A notice: the task was stopped in another process. If it runs here and its row ended or
   * moved, the run stops now, recording nothing (the stopping process recorded the end); the
   * lease renewal does the same later if the notice is lost.
   */
  stoppedElsewhere(taskId: string): void {
    const run = this.running.get(taskId);
    if (!run) return;
    const row = this.deps.tasks.get(taskId);
    if (row && (row.status === 'queued' || row.status === 'running') && row.runner === this.runnerId) return;
    this.deps.logger.info({ session: row?.originSession, task: taskId }, 'background task stopped from another process; its run here ends');
    run.controller.abort(SHUTDOWN_REASON);
  }

  /** Open rows no live process holds: workers a crash cut off are closed (their caller's tool call is answered by its own resume); tasks are resumed here. */
  private takeOver(): void {
    const { tasks, clock } = this.deps;
    const isGone = this.deps.isGone ?? runnerIsGone;
    for (const worker of tasks.claimOrphans('worker', this.claim(), clock.now(), isGone)) {
      tasks.finish(worker.id, { ...spendOf(worker), status: 'interrupted', result: worker.result, error: 'hob stopped while the worker ran' }, clock.now());
    }
    for (const task of tasks.claimOrphans('task', this.claim(), clock.now(), isGone)) this.launch(task);
  }

  /** Renews this process's claims; a run whose row ended or moved elsewhere (stopped from another process) stops here without recording anything. Then takes over orphans. */
  private sweep(): void {
    const { tasks, clock, lease, logger } = this.deps;
    if (!this.started || !lease) return;
    try {
      const held = new Set(tasks.renew(this.runnerId, clock.now() + lease.ms));
      for (const [id, run] of this.running) if (!held.has(id)) run.controller.abort(SHUTDOWN_REASON);
      this.takeOver();
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'could not renew or take over background tasks');
    }
  }

  private claim(): TaskClaim {
    const { lease, clock } = this.deps;
    return { runner: this.runnerId, leaseUntil: lease ? clock.now() + lease.ms : undefined };
  }

  /** Records a task for this person and starts it. An error (a limit) is a sentence for them. */
  create(request: NewTaskRequest): { task: TaskRow } | { error: string } {
    const { tasks, clock, settings } = this.deps;
    if (!this.started) return { error: 'Background tasks run only while hob start runs (their results are delivered from there).' };
    const personId = this.deps.people.personId(request.chat.platform, request.userId);
    const open = tasks.openCount(personId, 'task');
    if (open >= settings.maxRunning) {
      return { error: `You already have ${open} background task${open === 1 ? '' : 's'} running, the most at once (tasks.max_running). Wait for one to finish, or stop one with /tasks.` };
    }
    const prompt = request.prompt.trim();
    // Inserted already running here, so no other process's takeover can take it first.
    const task = tasks.insert({
      id: `t${randomBytes(4).toString('hex')}`,
      kind: 'task',
      personId,
      userId: request.userId,
      originSession: request.sessionKey,
      platform: request.chat.platform,
      chatId: request.chat.chatId,
      threadId: request.chat.threadId,
      agent: undefined,
      description: (request.description ?? prompt).replace(/\s+/g, ' ').slice(0, 60),
      prompt,
      createdAt: clock.now(),
    }, this.claim());
    this.launch(task);
    return { task };
  }

  /** This person's tasks, open ones first. */
  list(personId: string): TaskRow[] {
    return this.deps.tasks.listFor(personId);
  }

  /** One of this person's tasks (another person's id finds nothing), with what a running one has written so far. */
  get(id: string, personId: string): (TaskRow & { soFar?: string }) | undefined {
    const task = this.deps.tasks.getFor(id, personId);
    if (!task) return undefined;
    const said = this.running.get(id)?.said;
    return said ? { ...task, soFar: said } : task;
  }

  /** Stops one of this person's tasks. */
  stop(id: string, personId: string): StopOutcome {
    const task = this.deps.tasks.getFor(id, personId);
    if (!task) return 'not_found';
    if (task.status !== 'queued' && task.status !== 'running') return 'finished';
    const running = this.running.get(id);
    if (running) {
      running.controller.abort(STOPPED_BY_PERSON);
      return 'stopping';
    }
    // Not running here (queued before start, left by a process that is gone, or run by another process, which is told).
    this.end(task, { ...spendOf(task), status: 'stopped', result: task.result });
    if (task.runner !== undefined && task.runner !== this.runnerId) this.notices?.taskStopped(id);
    return 'stopped';
  }

  /** What this person's background tasks and workers have spent (for /usage). */
  spentBy(personId: string): ReturnType<TaskRepository['spentBy']> {
    return this.deps.tasks.spentBy(personId);
  }

  /** Waits for a task started here to end (tests, a Stop answer). */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  /** Resolves when every task started here so far has ended. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((run) => run.done));
  }

  /** hob is stopping: runs are aborted for a shutdown (they stay open and resume at the next start), awaited up to `graceMs`. */
  async shutdown(graceMs = 5000): Promise<void> {
    this.started = false;
    clearInterval(this.sweeper);
    for (const run of this.running.values()) run.controller.abort(SHUTDOWN_REASON);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  /** The conversation's next message carries the notifications of its tasks that ended (EngineDeps.notes). */
  notes(sessionKey: string): { texts: string[]; taken(): void } | undefined {
    const ended = this.deps.tasks.unnoted(sessionKey);
    if (ended.length === 0) return undefined;
    return { texts: ended.map(taskNotification), taken: () => this.deps.tasks.markNoted(ended.map((task) => task.id), this.deps.clock.now()) };
  }

  private launch(task: TaskRow): void {
    const { tasks, clock, settings, logger } = this.deps;
    if (this.running.has(task.id) || !tasks.markRunning(task.id, this.claim(), clock.now())) return;
    const controller = new AbortController();
    const startedAt = task.startedAt ?? clock.now();
    const limitMs = Math.max(1000, settings.timeoutSeconds * 1000 - (clock.now() - startedAt));
    const timer = setTimeout(() => controller.abort(TIME_LIMIT), limitMs);
    const entry: Running = { controller, said: '', done: Promise.resolve() };
    const session = taskSessionKey(task);
    entry.done = (async () => {
      try {
        const end = await runTask({
          task,
          engine: this.deps.engine(session),
          signal: controller.signal,
          abort: (reason) => controller.abort(reason),
          maxTokens: settings.maxTokens,
          trusted: this.isTrusted(task.platform, task.userId),
          onSpend: (spend) => tasks.recordSpend(task.id, spend),
          onText: (said) => (entry.said = said),
        });
        if (end) this.end(task, end);
      } catch (error) {
        logger.error({ session, task: task.id, err: errorMessage(error) }, 'background task failed');
        this.end(task, { ...spendOf(task), status: 'failed', error: errorMessage(error) });
      } finally {
        clearTimeout(timer);
        this.running.delete(task.id);
      }
    })();
    this.running.set(task.id, entry);
  }

  /** Ends the task once, its message to the chat recorded in the same transaction; then asks for delivery. */
  private end(task: TaskRow, end: TaskEnd): void {
    const { tasks, outbox, clock, logger } = this.deps;
    try {
      const ended = tasks.finish(task.id, end, clock.now(), (row) => {
        const text = taskEndMessage(row);
        if (!text) return undefined;
        return outbox.add({ platform: row.platform, chatId: row.chatId, threadId: row.threadId, sessionKey: row.originSession, message: encodeOutboxMessage({ text }), now: clock.now() });
      });
      if (ended) {
        logger.info({ session: task.originSession, task: task.id, status: end.status }, 'background task ended');
        this.kick();
      }
    } catch (error) {
      // The store is gone (hob is closing): the task stays open, and the next start takes it up.
      logger.warn({ session: task.originSession, task: task.id, err: errorMessage(error) }, 'could not record the end of a background task');
    }
  }
}

function spendOf(task: TaskRow) {
  return { toolUses: task.toolUses, inputTokens: task.inputTokens, outputTokens: task.outputTokens, costUsd: task.costUsd };
}
