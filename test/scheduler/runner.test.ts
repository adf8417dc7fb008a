import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { harness, jobIdIn } from './harness.js';

describe('reminders', () => {
  it('arrives once at its time, with its text as it is', async () => {
    const h = harness();
    const answer = await h.call('schedule_create', { kind: 'reminder', text: 'call the dentist', in: '20m' });
    expect(answer.content).toContain('Next run (Europe/Berlin): Tue 1 Dec 2026 11:20');
    h.clock.advance(19 * 60_000);
    await h.tick();
    expect(h.seen()).toEqual([]);
    h.clock.advance(60_000);
    await h.tick();
    await h.tick();
    expect(h.seen()).toEqual(['⏰ call the dentist']);
    const id = jobIdIn(answer.content);
    expect(h.scheduling.jobs.runs(id)).toMatchObject([{ status: 'handed', delivery: 'sent', late: false }]);
  });

  it('repeats on a cron schedule in the job timezone and keeps the delivery status apart from the run', async () => {
    const h = harness({ start: '2026-12-04T14:00:00Z' });
    const answer = await h.call('schedule_create', { kind: 'reminder', text: 'stand-up', cron: '0 8 * * 1-5', timezone: 'America/New_York' });
    expect(answer.content).toContain('Next runs (Europe/Berlin): Mon 7 Dec 2026 14:00; Tue 8 Dec 2026 14:00; Wed 9 Dec 2026 14:00');
    h.channel.onSend = () => {
      throw new Error('platform down');
    };
    h.clock.set('2026-12-07T13:00:00Z');
    await h.tick();
    const id = jobIdIn(answer.content);
    expect(h.scheduling.jobs.runs(id)).toMatchObject([{ status: 'handed', delivery: 'pending' }]);
    expect(h.scheduling.jobs.get(id)?.lastStatus).toBe('ok');
    h.channel.onSend = undefined;
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen()).toEqual(['⏰ stand-up']);
    expect(h.scheduling.jobs.runs(id)).toMatchObject([{ delivery: 'sent' }]);
  });

  it('a job may deliver to another platform of the same person', async () => {
    const h = harness();
    const answer = await h.call('schedule_create', { kind: 'reminder', text: 'water the plants', in: '1m' });
    const job = h.scheduling.jobs.get(jobIdIn(answer.content));
    if (!job) throw new Error('job missing');
    const other = new (await import('../fakes/memory-channel.js')).MemoryChannel();
    Object.defineProperty(other, 'platform', { value: 'elsewhere' });
    h.delivery.register(other);
    h.scheduling.jobs.save({ ...job, target: { platform: 'elsewhere', chatId: 'ann-dm' } }, h.clock.now());
    h.clock.advance(60_000);
    await h.tick();
    expect(other.chats.get('ann-dm')?.map((m) => m.text)).toEqual(['⏰ water the plants']);
    expect(h.seen()).toEqual([]);
  });
});

describe('missed runs', () => {
  it('a run missed by less than the grace window fires once, marked late', async () => {
    const h = harness();
    await h.call('schedule_create', { kind: 'reminder', text: 'take the pills', at: '2026-12-01T12:00' });
    h.clock.set('2026-12-01T11:08:00Z'); // 12:08 in Berlin: 8 minutes late
    await h.tick();
    await h.tick();
    expect(h.seen()).toEqual(['⏰ take the pills\n(It was due Tue 1 Dec 2026 12:00; hob was not running then.)']);
  });

  it('older runs are skipped and the owner is told once; the newest within grace still fires', async () => {
    const h = harness();
    const answer = await h.call('schedule_create', { kind: 'reminder', text: 'stretch', cron: '0 9 * * *' });
    expect(answer.content).toContain('Wed 2 Dec 2026 09:00');
    h.clock.set('2026-12-04T08:05:00Z'); // Fri 09:05 Berlin: Wed and Thu missed long ago, Fri 5 minutes ago
    await h.tick();
    await h.tick();
    expect(h.seen()).toEqual([
      'While hob was not running, 2 runs of your reminder "stretch" (due from Wed 2 Dec 2026 09:00 to Thu 3 Dec 2026 09:00, Europe/Berlin) were missed by more than 10 minutes, so I skipped them.',
      '⏰ stretch\n(It was due Fri 4 Dec 2026 09:00; hob was not running then.)',
    ]);
    expect(h.scheduling.jobs.get(jobIdIn(answer.content))?.nextRunAt).toBe(Date.parse('2026-12-05T08:00:00Z'));
  });

  it('after two days down, a minutely job tells once how many runs were skipped and fires the newest once', async () => {
    const h = harness();
    const id = jobIdIn((await h.call('schedule_create', { kind: 'reminder', text: 'drink water', every: '1m' })).content);
    h.clock.advance(2 * 86_400_000 + 30_000);
    await h.tick();
    await h.tick();
    const seen = h.seen();
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatch(/^While hob was not running, at least 1000 runs of your reminder "drink water" \(due from Tue 1 Dec 2026 11:01 to .*\) were missed by more than 10 minutes, so I skipped them\.$/);
    expect(seen[1]).toBe('⏰ drink water'); // the newest run was due 30 s ago: on time
    expect(h.scheduling.jobs.get(id)?.nextRunAt).toBeGreaterThan(h.clock.now());
  });

  it('a one-shot missed by more than the grace window is not sent; the owner hears it was skipped', async () => {
    const h = harness();
    await h.call('schedule_create', { kind: 'reminder', text: 'leave for the train', in: '30m' });
    h.clock.advance(30 * 60_000 + 11 * 60_000);
    await h.tick();
    expect(h.seen()).toEqual([
      'While hob was not running, 1 run of your reminder "leave for the train" (due Tue 1 Dec 2026 11:30, Europe/Berlin) was missed by more than 10 minutes, so I skipped it.',
    ]);
  });
});

describe('reports', () => {
  it('run as a headless turn: a call that needs approval is denied and the report says so', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'df -h' } }] }, { text: 'Disk report: I could not check the disks.' }]);
    const h = harness({ model });
    await h.call('schedule_create', { kind: 'report', text: 'report the free disk space', in: '1m' });
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen()).toEqual([
      'Disk report: I could not check the disks.\n\n(Not done: "df -h" needed an approval, and nobody is asked during a scheduled report. An "always allow" rule lets reports use it.)',
    ]);
    expect(JSON.stringify(model.requests[0]?.messages)).toContain('report the free disk space');
  });

  it("run as the person who made them: their 'always allow' rules apply", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'uptime' } }] }, { text: 'Up 3 days.' }]);
    const h = harness({ model });
    await h.call('schedule_create', { kind: 'report', text: 'how long has the server been up?', in: '1m' });
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen()).toEqual(['Up 3 days.']);
    expect(JSON.stringify(model.requests[1]?.messages)).toContain('ran');
  });

  it('in full_auto run without asking only for people on allow_from: a group-only member’s report is still refused', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'bash', input: { command: 'cat notes.txt' } }] },
      { text: 'Bob’s report: not allowed.' },
      { toolCalls: [{ name: 'bash', input: { command: 'df -h' } }] },
      { text: 'Ann’s report: disks fine.' },
    ]);
    const h = harness({ model, fullAuto: true });
    await h.call('schedule_create', { kind: 'report', text: 'Bob’s report', in: '1m' }, { userId: '200', chatId: 'group-1' });
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen('group-1')).toEqual(['Bob’s report: not allowed.\n\n(Not done: "cat notes.txt" needed an approval, and nobody is asked during a scheduled report. An "always allow" rule lets reports use it.)']);
    await h.call('schedule_create', { kind: 'report', text: 'Ann’s report', in: '1m' });
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen()).toEqual(['Ann’s report: disks fine.']);
  });

  it('pause after max_failures failures in a row, and the owner is told', async () => {
    const failing = new ProviderError('model endpoint unreachable', { retryable: false });
    const model = new ScriptedModel(Array.from({ length: 5 }, () => ({ error: failing })));
    const h = harness({ model });
    const answer = await h.call('schedule_create', { kind: 'report', text: 'morning briefing', every: '1h' });
    const id = jobIdIn(answer.content);
    for (let i = 0; i < 4; i++) {
      h.clock.advance(3600_000);
      await h.tick();
    }
    const seen = h.seen();
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatch(/^Your report "morning briefing" failed: .*model endpoint unreachable.*\(1 of 3 failures in a row before it pauses\.\)$/);
    expect(seen[2]).toContain(`That is 3 failures in a row, so I paused it. Resume it with /jobs (or hob jobs resume ${id})`);
    expect(h.scheduling.jobs.get(id)).toMatchObject({ enabled: false, consecutiveFailures: 3 });
    expect(model.requests).toHaveLength(3);
  });

  it('a report that outlives its time limit fails with that reason', async () => {
    const h = harness({ settings: { reportTimeoutSeconds: 1 }, runReport: (_job, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, error: 'stopped' }))) });
    await h.call('schedule_create', { kind: 'report', text: 'slow report', in: '1m' });
    h.clock.advance(60_000);
    await h.tick();
    expect(h.seen()).toEqual(['Your report "slow report" failed: it ran longer than its time limit of 1 s. (1 of 3 failures in a row before it pauses.)']);
  });
});

describe('crashes and two runners', () => {
  it('a report cut off by a stop is not run again; the next start says it was cut off', async () => {
    const first = harness({ runReport: (_job, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, error: 'aborted' }))) });
    await first.call('schedule_create', { kind: 'report', text: 'weekly summary', cron: '0 9 * * 1' });
    first.clock.set('2026-12-07T08:00:00Z');
    await first.scheduler.tick();
    await first.scheduler.stop(); // hob stops while the report runs
    const second = harness({ dir: first.dir, start: '2026-12-07T08:01:00Z' });
    await second.tick();
    expect(second.seen()).toEqual([]); // the first runner's lease (time limit + 30 s) still holds
    second.clock.set('2026-12-07T08:05:00Z');
    await second.tick();
    expect(second.seen()).toEqual(['Your report "weekly summary" was cut off: hob stopped while it was running. It runs again Mon 14 Dec 2026 09:00.']);
    expect(second.scheduling.jobs.runs(second.scheduling.jobs.list()[0]?.id ?? '')).toMatchObject([{ status: 'interrupted', delivery: 'sent' }]);
  });

  it('a run claimed by a runner that died is delivered once by the next one, after its lease', async () => {
    const first = harness();
    await first.call('schedule_create', { kind: 'reminder', text: 'feed the cat', in: '1m' });
    first.clock.advance(60_000);
    // The first runner claims and dies before handing the run over.
    const claimed = first.scheduling.jobs.claimDue(first.clock.now(), 'elsewhere:1:dead', 30_000, 10, (job) => first.scheduler.plan(job, first.clock.now()), () => undefined);
    expect(claimed).toHaveLength(1);
    const second = harness({ dir: first.dir, start: new Date(first.clock.now()).toISOString() });
    await second.tick();
    expect(second.seen()).toEqual([]); // still leased by the first runner
    second.clock.advance(31_000);
    await second.tick();
    await second.tick();
    expect(second.seen()).toEqual(['⏰ feed the cat']);
  });

  it('two runners on one database: every run happens once', async () => {
    const a = harness();
    const b = harness({ dir: a.dir });
    for (let i = 0; i < 40; i++) await a.call('schedule_create', { kind: 'reminder', text: `r${i}`, every: `${1 + (i % 3)}m` });
    for (let minute = 0; minute < 12; minute++) {
      a.clock.advance(60_000);
      b.clock.advance(60_000);
      const [one, two] = minute % 2 ? [a, b] : [b, a];
      await Promise.all([one.scheduler.tick(), two.scheduler.tick()]);
    }
    const counts = a.db.prepare<[], { job_id: string; runs: number; messages: number }>(
      `SELECT j.id job_id, (SELECT COUNT(*) FROM job_runs r WHERE r.job_id = j.id) runs,
              (SELECT COUNT(*) FROM outbox o WHERE o.session_key = 'job:' || j.id) messages FROM jobs j`,
    ).all();
    const expected = (text: number) => Math.floor(12 / (1 + (text % 3)));
    const texts = new Map(a.scheduling.jobs.list().map((job) => [job.id, Number(job.text.slice(1))]));
    for (const row of counts) {
      expect(row.runs).toBe(expected(texts.get(row.job_id) as number));
      expect(row.messages).toBe(row.runs);
    }
    const runners = a.db.prepare<[], { n: number }>('SELECT COUNT(DISTINCT runner) n FROM job_runs').get()?.n;
    expect(runners).toBe(2);
  });
});
