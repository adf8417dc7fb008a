import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { SqliteJobs } from '../../src/store/sqlite/jobs.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { bundleChild } from '../support/bundled-child.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, writeStartConfig, type HobProcess } from '../support/hob-process.js';

let model: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await telegram?.close();
  await model?.close();
});

/** A hob whose database already holds Ann's reminder, due now. */
async function setUp(): Promise<{ path: string; dir: string }> {
  model = await startFakeAnthropic();
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  const dir = tempDir('hob-sched-restart-');
  const path = writeStartConfig(dir, { model, telegram });
  const db = openDatabase(join(dir, 'data', 'hob.db'));
  new SqliteJobs(db).create({
    id: 'j0000dead',
    ownerId: 'telegram:100',
    createdBy: '100',
    originSession: 'telegram:100',
    target: { platform: 'telegram', chatId: '100' },
    kind: 'reminder',
    text: 'call the dentist',
    schedule: { kind: 'at', at: Date.now() },
    timezone: 'Europe/Berlin',
    nextRunAt: Date.now(),
    createdAt: Date.now(),
  });
  db.close();
  return { path, dir };
}

function start(path: string, fault?: string): HobProcess {
  const hob = spawnHob(['--config', path, 'start'], cleanEnv(fault ? { HOB_FAULT: fault } : {}));
  running.push(hob);
  return hob;
}

describe('a reminder across kills of hob start', () => {
  it('killed right after its run was claimed, then (the restart taking the run over) right before its delivery: after the last restart it arrives exactly once', async () => {
    const { path, dir } = await setUp();
    const runs = () => {
      const db = openDatabase(join(dir, 'data', 'hob.db'));
      try {
        return new SqliteJobs(db).runs('j0000dead');
      } finally {
        db.close();
      }
    };
    const reminders = () => telegram?.chat(100).filter((m) => m.text.includes('call the dentist'));
    // Each start with a fault kills itself at that point: the run claimed; then the run the
    // first start left, taken over by the second, handed to delivery but not sent. One run
    // all along: a restart that ran the reminder again would show a second one.
    for (const [fault, leftBehind] of [
      ['scheduler:claimed', { status: 'claimed' }],
      ['scheduler:handed', { status: 'handed', delivery: 'pending' }],
    ] as const) {
      await start(path, fault).exited;
      expect(reminders()).toEqual([]);
      expect(runs()).toMatchObject([leftBehind]);
    }

    const last = start(path);
    await last.waitFor('hob is running on telegram as @hob_bot');
    await telegram?.waitFor(() => telegram?.chat(100).find((m) => m.text === '⏰ call the dentist'), 15_000, 'the reminder');
    await telegram?.waitFor(() => runs()[0]?.delivery === 'sent', 5000, 'the delivery marked sent');
    expect(runs()).toMatchObject([{ status: 'handed', delivery: 'sent' }]);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    expect(reminders()).toHaveLength(1);
  });
});

describe('two hob processes on one database', () => {
  it('every run happens once: none twice, none lost', async () => {
    const { spawn } = await import('node:child_process');
    const dir = tempDir('hob-two-runners-');
    const dbPath = join(dir, 'hob.db');
    const db = openDatabase(dbPath);
    const jobs = new SqliteJobs(db);
    const base = Date.parse('2026-12-01T10:00:00Z');
    for (let i = 0; i < 200; i++) {
      const everyMs = (1 + (i % 2)) * 60_000;
      jobs.create({ id: `j${i.toString(16).padStart(8, '0')}`, ownerId: 'telegram:100', createdBy: '100', originSession: 'telegram:100', target: { platform: 'telegram', chatId: '100' }, kind: 'reminder', text: `r${i}`, schedule: { kind: 'every', everyMs }, timezone: 'UTC', nextRunAt: base + everyMs, createdAt: base });
    }
    // Ten and a half simulated minutes (3.15 s at 200x): ten runs of each one-minute job, five
    // of each two-minute one, 1,500 in all, each due moment raced by both runners ticking flat
    // out. (Five and a half minutes, 700 runs, was tried: on a busy machine one runner could
    // miss the whole race, so "both runners claim some" failed though no run was lost.)
    const endAt = base + 10.5 * 60_000;
    const script = await bundleChild(join(import.meta.dirname, 'runner-child.ts'));
    const child = () => {
      const proc = spawn(process.execPath, [script, dbPath, String(base), '200', String(endAt)], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      let markReady: () => void = () => undefined;
      const ready = new Promise<void>((resolve) => (markReady = resolve));
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.startsWith('ready\n')) markReady();
      });
      const result = new Promise<{ claimed: number }>((resolve, reject) =>
        proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.slice('ready\n'.length)) as { claimed: number }) : reject(new Error(`runner exited with ${code}: ${out}`)))),
      );
      return { proc, ready, result };
    };
    const runners = [child(), child()] as const;
    await Promise.all(runners.map((runner) => runner.ready));
    const startWall = Date.now() + 100;
    for (const runner of runners) runner.proc.stdin.write(`${startWall}\n`);
    const [a, b] = await Promise.all([runners[0].result, runners[1].result]);
    // A run claimed just before the end whose hand-over stalled past its lease is not lost:
    // the next runner takes it over. No new runs: the jobs are paused first.
    db.prepare('UPDATE jobs SET enabled = 0').run();
    const { Scheduler } = await import('../../src/scheduler/runner.js');
    const { createLogger } = await import('../../src/logger.js');
    const sweeper = new Scheduler({ jobs, transaction: (fn) => db.transaction(fn).immediate(), outbox: new SqliteOutbox(db), kick: () => undefined, clock: { now: () => endAt + 60_000 }, logger: createLogger({ level: 'silent', destination: 'silent' }), settings: { graceMinutes: 10, maxFailures: 3, reportTimeoutSeconds: 60 }, timezoneFor: () => 'UTC' });
    await sweeper.tick();
    const perJob = db
      .prepare(`SELECT j.text, (SELECT COUNT(*) FROM job_runs r WHERE r.job_id = j.id) runs, (SELECT COUNT(*) FROM outbox o WHERE o.session_key = 'job:' || j.id) messages FROM jobs j`)
      .all() as { text: string; runs: number; messages: number }[];
    db.close();
    for (const row of perJob) {
      expect(row.runs, row.text).toBe(Number(row.text.slice(1)) % 2 ? 5 : 10);
      expect(row.messages, row.text).toBe(row.runs);
    }
    expect(a.claimed + b.claimed).toBe(1500);
    expect(a.claimed).toBeGreaterThan(0);
    expect(b.claimed).toBeGreaterThan(0);
  }, 30_000);
});

describe('hob start in a terminal', () => {
  it('a reminder made in the terminal arrives in the terminal', async () => {
    model = await startFakeAnthropic();
    const dir = tempDir('hob-sched-console-');
    const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }\n`);
    model.push(
      {
        toolCalls: [
          { name: 'schedule_create', input: { kind: 'reminder', text: 'stretch your legs', in: '1s' } },
          { name: 'schedule_create', input: { kind: 'reminder', text: 'daily', cron: '0 9 * * 1-5' } },
          { name: 'schedule_create', input: { kind: 'reminder', text: 'bad', cron: '0 25 * * *' } },
        ],
      },
      { text: 'I will remind you in a second.' },
    );
    const hob = start(path);
    hob.child.stdin.write('remind me in a second to stretch\n');
    await hob.waitFor('I will remind you in a second.');
    await hob.waitFor('⏰ stretch your legs', 10_000);
    const results = JSON.stringify(model.requests[1]?.body.messages);
    expect(results).toMatch(/Created reminder j[0-9a-f]{8}: once at /);
    expect(results).toMatch(/Created reminder j[0-9a-f]{8}: cron \\"0 9 \* \* 1-5\\" \(UTC\)/);
    expect(results).toContain('is not valid (hour: ');
    hob.child.stdin.end();
    expect(await hob.exited).toBe(0);
    expect(hob.output().split('⏰ stretch your legs')).toHaveLength(2);
  });
});
