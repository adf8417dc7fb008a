import { join } from 'node:path';
import { z } from 'zod';
import type { PersonResolver } from '../../src/core/person.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { Delivery } from '../../src/gateway/delivery.js';
import { createLogger } from '../../src/logger.js';
import { createScheduling, type Scheduling } from '../../src/scheduler/index.js';
import { reportRunner } from '../../src/scheduler/report.js';
import { Scheduler, type ReportRunner, type SchedulerSettings } from '../../src/scheduler/runner.js';
import { personTimezone } from '../../src/scheduler/tools.js';
import type { Db } from '../../src/store/sqlite/db.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { ProviderClient } from '../../src/providers/types.js';
import type { Tool, ToolOutput } from '../../src/tools/tool.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { engineDeps } from '../support/deps.js';
import { gate, tempDir } from '../support/engine.js';
import { makeContext } from '../tools/tool-harness.js';

export const silent = createLogger({ level: 'silent', destination: 'silent' });

/** A clock tests move by hand. */
export type TestClock = { now(): number; set(iso: string): void; advance(ms: number): void };

export function testClock(start: string): TestClock {
  let now = Date.parse(start);
  return { now: () => now, set: (iso) => (now = Date.parse(iso)), advance: (ms) => (now += ms) };
}

export const SETTINGS: SchedulerSettings = { graceMinutes: 10, maxFailures: 3, reportTimeoutSeconds: 60 };

export type Harness = {
  db: Db;
  dir: string;
  clock: TestClock;
  channel: MemoryChannel;
  delivery: Delivery;
  scheduling: Scheduling;
  scheduler: Scheduler;
  /** One scheduler pass, its reports finished and the outbox flushed. */
  tick(): Promise<void>;
  /** Calls a schedule_* tool as a person writing from a chat (default: Ann in her DM). */
  call(name: string, input: unknown, as?: { userId: string; chatId?: string }): Promise<{ content: string; isError: boolean }>;
  /** Texts the chat shows. */
  seen(chatId?: string): string[];
};

/**
 * A scheduler over a real SQLite file, the real delivery outbox and an in-memory chat
 * platform; time moves only when the test says. Ann (100) owns hob; Bob (200) does not.
 */
export function harness(options: { fullAuto?: boolean; start?: string; settings?: Partial<SchedulerSettings>; runReport?: ReportRunner; model?: ProviderClient; timezoneFor?(person: string): string | undefined; people?: PersonResolver; dir?: string; maxJobsPerPerson?: number } = {}): Harness {
  const dir = options.dir ?? tempDir('hob-sched-');
  const clock = testClock(options.start ?? '2026-12-01T10:00:00Z');
  const store = openSqliteStore(join(dir, 'hob.db'), { clock });
  const db = store.db;
  const channel = new MemoryChannel();
  const delivery = new Delivery(store.outbox, clock, silent, { retryBaseMs: 10 });
  delivery.register(channel);
  const settings = { ...SETTINGS, ...options.settings };
  const scheduling = createScheduling({ store, clock, defaultTimezone: 'Europe/Berlin', settings, timezoneFor: options.timezoneFor, people: options.people, maxJobsPerPerson: options.maxJobsPerPerson });
  scheduling.setOwnerCheck((_platform, userId) => userId === '100');
  let runReport = options.runReport;
  if (!runReport && options.model) {
    // Ann (100) has an "always allow" rule for `uptime`; everything else asks.
    // In full_auto, everything runs for people on allow_from (only Ann here), as permissions.ts decides.
    const full = {
      ...engineDeps(options.model, [shellLike], dir),
      permissions: gate((query) =>
        options.fullAuto && query.trusted !== false
          ? { behavior: 'allow', reason: 'full_auto' }
          : query.userId === '100' && query.command === 'uptime' ? { behavior: 'allow', reason: 'always rule' } : { behavior: 'ask', reason: 'shell commands need approval' },
      ),
    };
    runReport = reportRunner((key) => new QueryEngine(key, full), (_platform, userId) => userId === '100');
  }
  const scheduler = new Scheduler({
    jobs: scheduling.jobs,
    transaction: (fn) => store.transaction(fn),
    outbox: store.outbox,
    kick: () => undefined,
    clock,
    logger: silent,
    settings,
    runReport,
    timezoneFor: (person) => personTimezone(scheduling.access, person),
  });
  const tools = new Map(scheduling.tools.map((tool) => [tool.name, tool]));
  return {
    db,
    dir,
    clock,
    channel,
    delivery,
    scheduling,
    scheduler,
    tick: async () => {
      await scheduler.tick();
      await scheduler.idle();
      await delivery.flush();
      await delivery.flush();
    },
    call: async (name, input, as = { userId: '100' }) => {
      const tool = tools.get(name) as Tool<unknown>;
      const ctx = { ...makeContext(dir), sessionKey: `memory:${as.chatId ?? as.userId}`, userId: as.userId };
      const output: ToolOutput = await tool.run(tool.input.parse(input), ctx);
      return typeof output === 'string' ? { content: output, isError: false } : { content: output.content, isError: output.isError ?? false };
    },
    seen: (chatId = '100') => (channel.chats.get(chatId) ?? []).map((message) => message.text),
  };
}

/** A tool that always needs an approval, standing in for the shell. */
const shellLike: Tool<{ command: string }> = {
  name: 'bash',
  description: 'run a command',
  input: z.object({ command: z.string() }),
  readOnly: () => false,
  target: (input) => ({ command: input.command }),
  run: async () => 'ran',
};

export function jobIdIn(answer: string): string {
  const match = /\b(j[0-9a-f]{8})\b/.exec(answer);
  if (!match) throw new Error(`no job id in: ${answer}`);
  return match[1] as string;
}
