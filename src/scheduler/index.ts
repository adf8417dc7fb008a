import type { Clock } from '../core/clock.js';
import { unlinkedPeople, type PersonResolver } from '../core/person.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Logger } from '../logger.js';
import type { JobRepository } from '../store/jobs.js';
import type { OutboxRepository } from '../store/outbox.js';
import type { Store } from '../store/store.js';
import { faultFromEnv as faultAt } from '../core/fault.js';
import type { AnyTool } from '../tools/tool.js';
import { reportRunner } from './report.js';
import { Scheduler, type FaultPoint, type SchedulerSettings } from './runner.js';
import { personTimezone, scheduleTools, type JobAccess } from './tools.js';

export type SchedulingOptions = {
  store: Store;
  clock: Clock;
  /** config `timezone`. */
  defaultTimezone: string;
  settings: SchedulerSettings;
  people?: PersonResolver;
  timezoneFor?(personId: string): string | undefined;
  /** config `scheduler.max_jobs_per_person`; default 50. */
  maxJobsPerPerson?: number;
};

/** The scheduler's parts one hob process shares: the jobs, who may see them, the tools, the runner. */
export type Scheduling = {
  jobs: JobRepository;
  access: JobAccess;
  tools: AnyTool[];
  /** The gateway knows who owns hob; until it says, only the terminal's person does. */
  setOwnerCheck(isOwner: (platform: string, userId: string) => boolean): void;
  /** Starts the runner: `kick` asks the delivery worker to send what the runner recorded. */
  startRunner(options: {
    kick(): void;
    engine(sessionKey: string): QueryEngine;
    logger: Logger;
    intervalMs?: number;
    fault?(point: FaultPoint): void;
    /**
     * issue 23: who claims the runs, and when another runner's claims may be taken over (its
     * process is gone: with several processes on PostgreSQL, its node's heartbeat ran out).
     */
    runner?: { nodeId: string; isGone(runner: string): boolean };
    /** Whether a job's maker is on allow_from, so `full_auto` applies to their reports (default: the terminal's person only). */
    isTrusted?(platform: string, userId: string): boolean;
  }): Scheduler;
};

export function createScheduling(options: SchedulingOptions): Scheduling {
  const jobs = options.store.jobs;
  let isOwner: (platform: string, userId: string) => boolean = (platform) => platform === 'console';
  const access: JobAccess = {
    jobs,
    clock: options.clock,
    people: options.people ?? unlinkedPeople,
    timezoneFor: (personId) => options.timezoneFor?.(personId),
    defaultTimezone: options.defaultTimezone,
    isOwner: (platform, userId) => platform === 'console' || isOwner(platform, userId),
    maxJobsPerPerson: options.maxJobsPerPerson ?? 50,
  };
  return {
    jobs,
    access,
    tools: scheduleTools(access),
    setOwnerCheck: (check) => (isOwner = check),
    startRunner: (runner) => {
      const scheduler = new Scheduler({
        jobs,
        transaction: (fn) => options.store.transaction(fn),
        outbox: options.store.outbox,
        kick: runner.kick,
        clock: options.clock,
        logger: runner.logger,
        settings: options.settings,
        runReport: reportRunner(runner.engine, runner.isTrusted),
        timezoneFor: (personId) => personTimezone(access, personId),
        fault: runner.fault,
        ...(runner.runner ? { runnerId: runner.runner.nodeId, isGone: runner.runner.isGone.bind(runner.runner) } : {}),
      });
      scheduler.start(runner.intervalMs);
      return scheduler;
    },
  };
}

/** Crash tests: `HOB_FAULT=scheduler:claimed` (or `scheduler:handed`) kills this process at that point. */
export function faultFromEnv(value = process.env.HOB_FAULT): ((point: FaultPoint) => void) | undefined {
  return faultAt<FaultPoint>('scheduler', value);
}

/**
 * A kick for the runner: flushes the delivery outbox until what is due is sent (a pass
 * takes 50 rows, and a pass already running may have read its rows before ours were added).
 * Stops when nothing is due or a pass made no progress (a row waiting for its retry).
 */
export function drainer(delivery: { flush(): Promise<void> }, outbox: Pick<OutboxRepository, 'due'>, clock: Clock = { now: () => Date.now() }): () => void {
  let draining: Promise<void> | undefined;
  let again = false;
  const drain = async () => {
    let head: number | undefined;
    for (let pass = 0; pass < 10_000; pass++) {
      again = false;
      await delivery.flush();
      const next = outbox.due(clock.now(), 1)[0]?.id;
      if (!again && (next === undefined || next === head)) break;
      head = next;
    }
  };
  return () => {
    again = true;
    draining ??= drain().finally(() => (draining = undefined));
  };
}
