/**
 * The scheduler's costs. (1) With 100,000 stored jobs: one pass that finds nothing due (the
 * indexed scan), and a pass that claims 100 due runs and hands them to the outbox, per run.
 * (2) Lateness with 1,000 reminders due in the same minute: from each one's scheduled time to
 * the moment its message is handed to the platform (an in-memory channel), with the runner and
 * the delivery worker running as in `hob start` (real clock, real SQLite file).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../src/core/clock.js';
import { Delivery } from '../src/gateway/delivery.js';
import { createLogger } from '../src/logger.js';
import { drainer } from '../src/scheduler/index.js';
import { Scheduler } from '../src/scheduler/runner.js';
import { openDatabase, type Db } from '../src/store/sqlite/db.js';
import { SqliteJobs } from '../src/store/sqlite/jobs.js';
import { SqliteOutbox } from '../src/store/sqlite/outbox.js';
import { MemoryChannel } from '../test/fakes/memory-channel.js';
import { tempDir } from '../test/support/engine.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const STORED = 100_000;
const DUE_PER_PASS = 100;
const PASSES = 50;
const SAME_MINUTE = 1_000;
const silent = createLogger({ level: 'silent', destination: 'silent' });
const settings = { graceMinutes: 10, maxFailures: 3, reportTimeoutSeconds: 60 };

function fill(db: Db, jobs: SqliteJobs, count: number, firstRun: (n: number) => number): void {
  db.transaction(() => {
    for (let n = 0; n < count; n++) {
      const schedule = n % 3 === 0 ? { kind: 'cron' as const, expression: `${n % 60} ${n % 24} * * *` } : n % 3 === 1 ? { kind: 'every' as const, everyMs: 3600_000 } : { kind: 'at' as const, at: firstRun(n) };
      jobs.create({
        id: `j${n.toString(16).padStart(8, '0')}`,
        ownerId: `telegram:${n % 5000}`,
        createdBy: String(n % 5000),
        originSession: `telegram:${n % 5000}`,
        target: { platform: 'memory', chatId: `dm-${n % 5000}` },
        kind: 'reminder',
        text: `reminder ${n}`,
        schedule,
        timezone: n % 2 ? 'Europe/Berlin' : 'America/New_York',
        nextRunAt: firstRun(n),
        createdAt: Date.now(),
      });
    }
  })();
}

async function scanAndClaim(): Promise<string[]> {
  const dir = tempDir('hob-bench-sched-');
  const db = openDatabase(join(dir, 'hob.db'));
  try {
    const jobs = new SqliteJobs(db);
    const now = Date.now();
    fill(db, jobs, STORED, (n) => now + 86_400_000 + n * 1000);
    let clock = now;
    const scheduler = new Scheduler({ jobs, transaction: (fn) => db.transaction(fn).immediate(), outbox: new SqliteOutbox(db), kick: () => undefined, clock: { now: () => clock }, logger: silent, settings, timezoneFor: () => 'UTC' });
    const idleUs: number[] = [];
    for (let i = 0; i < 20; i++) await scheduler.tick(); // warm-up
    for (let i = 0; i < 500; i++) {
      const started = performance.now();
      await scheduler.tick();
      idleUs.push((performance.now() - started) * 1000);
    }
    const perRunUs: number[] = [];
    for (let pass = 0; pass < PASSES; pass++) {
      clock += 1000;
      const due = db.prepare('UPDATE jobs SET next_run_at = ? WHERE rowid IN (SELECT rowid FROM jobs ORDER BY random() LIMIT ?)');
      due.run(clock, DUE_PER_PASS);
      const started = performance.now();
      await scheduler.tick();
      perRunUs.push(((performance.now() - started) * 1000) / DUE_PER_PASS);
    }
    const claimed = (db.prepare('SELECT COUNT(*) n FROM job_runs').get() as { n: number }).n;
    const lines = [
      `scheduler pass with nothing due, ${STORED.toLocaleString('en-US')} stored jobs: median ${fmt(median(idleUs))} µs, p99 ${fmt(percentile(idleUs, 0.99))} µs (500 passes)`,
      `claim + hand-over per due run, ${STORED.toLocaleString('en-US')} stored jobs: median ${fmt(median(perRunUs))} µs, p99 ${fmt(percentile(perRunUs, 0.99))} µs (${PASSES} passes × ${DUE_PER_PASS} due; ${claimed.toLocaleString('en-US')} runs claimed)`,
    ];
    for (const line of lines) console.log(line);
    return lines;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function lateness(): Promise<string[]> {
  const dir = tempDir('hob-bench-late-');
  const db = openDatabase(join(dir, 'hob.db'));
  try {
    const jobs = new SqliteJobs(db);
    const dueAt = Date.now() + 1500;
    fill(db, jobs, SAME_MINUTE, () => dueAt); // all at the same instant
    const channel = new MemoryChannel();
    const late: number[] = [];
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    channel.onSend = () => {
      late.push(Date.now() - dueAt);
      if (late.length === SAME_MINUTE) done();
    };
    const delivery = new Delivery(new SqliteOutbox(db), systemClock, silent);
    delivery.register(channel);
    delivery.start(1000);
    const scheduler = new Scheduler({ jobs, transaction: (fn) => db.transaction(fn).immediate(), outbox: new SqliteOutbox(db), kick: drainer(delivery, new SqliteOutbox(db)), clock: systemClock, logger: silent, settings, timezoneFor: () => 'UTC' });
    const keepAlive = setInterval(() => undefined, 1000); // the runner's timers do not hold the process
    scheduler.start(1000);
    await all;
    clearInterval(keepAlive);
    await scheduler.stop();
    await delivery.stop();
    const line = `reminder lateness (scheduled → handed to the platform), ${SAME_MINUTE.toLocaleString('en-US')} due at once: median ${fmt(median(late))} ms, p99 ${fmt(percentile(late, 0.99))} ms, last ${fmt(Math.max(...late))} ms`;
    console.log(line);
    return [line];
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult> {
  const first = await scanAndClaim();
  const second = await lateness();
  return { name: 'scheduler', summary: [...first, ...second] };
}

runIfMain(import.meta.url, run);
