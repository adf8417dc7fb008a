import { describe, expect, it } from 'vitest';
import type { ClaimPlan, Job } from '../../../src/store/job.js';
import type { NewJob } from '../../../src/store/jobs.js';
import { encodeOutboxMessage } from '../../../src/store/outbox-message.js';
import { useStore, type StoreFactory } from './harness.js';

function job(id: string, ownerId: string, nextRunAt: number | undefined, createdAt: number): NewJob {
  return { id, ownerId, createdBy: 'u1', originSession: 'telegram:1', target: { platform: 'telegram', chatId: '1' }, kind: 'reminder', text: `remind ${id}`, schedule: { kind: 'every', everyMs: 60_000 }, timezone: 'UTC', nextRunAt, createdAt };
}
const fireNow = (job: Job): ClaimPlan => ({ fire: { scheduledFor: job.nextRunAt as number, late: false }, skipped: undefined, next: (job.nextRunAt as number) + 60_000 });

/** Jobs and their runs, "always allow" rules, token calibration. */
export function schedulesContract(factory: StoreFactory): void {
  const fresh = useStore(factory);

  describe(`jobs (${factory.kind})`, () => {
    it('creates jobs within the per-person limit and lists them soonest first', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.jobs.create(job('j1', 'ann', now + 2000, now));
      expect(store.jobs.createWithin(job('j2', 'ann', now + 1000, now), 2)?.id).toBe('j2');
      expect(store.jobs.createWithin(job('j3', 'ann', now + 500, now), 2)).toBeUndefined();
      store.jobs.create(job('j4', 'bob', undefined, now));
      expect(store.jobs.list('ann').map((entry) => entry.id)).toEqual(['j2', 'j1']);
      expect(store.jobs.list().map((entry) => entry.id)).toEqual(['j2', 'j1', 'j4']);
      expect(store.jobs.nextDue()).toBe(now + 1000);
      const paused = { ...(store.jobs.get('j2') as Job), enabled: false, text: 'changed' };
      store.jobs.save(paused, now);
      expect(store.jobs.get('j2')).toMatchObject({ enabled: false, text: 'changed', schedule: { kind: 'every', everyMs: 60_000 } });
      expect(store.jobs.nextDue()).toBe(now + 2000);
      expect(store.jobs.delete('j2')).toBe(true);
      expect(store.jobs.delete('j2')).toBe(false);
    });

    it('claims a due run once, fences a runner that lost it, and hands its output over with the outbox row', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.jobs.create(job('j1', 'ann', now, now));
      const claimed = store.jobs.claimDue(now, 'runner-a', 10_000, 10, fireNow, () => undefined);
      expect(claimed.map((entry) => [entry.job.id, entry.run.status, entry.run.runner])).toEqual([['j1', 'claimed', 'runner-a']]);
      expect(store.jobs.claimDue(now, 'runner-b', 10_000, 10, fireNow, () => undefined)).toEqual([]);
      expect(store.jobs.get('j1')?.nextRunAt).toBe(now + 60_000);
      const run = claimed[0]!.run;
      // runner-a stalls past its lease; runner-b takes the run over.
      expect(store.jobs.takeOverOrphans(now + 1000, 'runner-b', 10_000, () => false)).toEqual([]);
      expect(store.jobs.takeOverOrphans(now + 20_000, 'runner-b', 10_000, () => false).map((taken) => [taken.id, taken.runner])).toEqual([[run.id, 'runner-b']]);
      expect(store.jobs.markRunning(run.id, 'runner-a', now + 30_000)).toBe(false);
      const record = () => store.outbox.add({ platform: 'telegram', chatId: '1', message: encodeOutboxMessage({ text: 'reminder' }), now });
      expect(store.jobs.handOver(run.id, 'runner-a', 'j1', now, record, { ok: true, pauseAfter: 3 })).toBeUndefined();
      expect(store.outbox.counts().pending).toBe(0);
      expect(store.jobs.markRunning(run.id, 'runner-b', now + 30_000)).toBe(true);
      expect(store.jobs.handOver(run.id, 'runner-b', 'j1', now, record, { ok: true, pauseAfter: 3 })).toEqual({ paused: false, failures: 0 });
      expect(store.jobs.run(run.id)).toMatchObject({ status: 'handed', outboxId: expect.any(Number) });
      expect(store.jobs.runs('j1').map((entry) => [entry.status, entry.delivery])).toEqual([['handed', 'pending']]);
    });

    it('pauses a job after too many failures in a row', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.jobs.create(job('j1', 'ann', now, now));
      let outcome;
      for (let n = 0; n < 2; n++) {
        const [claimed] = store.jobs.claimDue(clock.now(), 'r', 10_000, 1, fireNow, () => undefined);
        outcome = store.jobs.close(claimed!.run.id, 'r', 'j1', clock.now(), 'failed', 'boom', 2);
        clock.advance(60_000);
      }
      expect(outcome).toEqual({ paused: true, failures: 2 });
      expect(store.jobs.get('j1')).toMatchObject({ enabled: false, consecutiveFailures: 2, lastStatus: 'failed: boom' });
    });
  });

  describe(`permission rules and calibration (${factory.kind})`, () => {
    it('keeps each "always allow" rule once per person, also without a command or path', async () => {
      const { store } = await fresh();
      store.permissionRules.add('ann', { toolName: 'bash', command: 'ls' });
      store.permissionRules.add('ann', { toolName: 'bash', command: 'ls' });
      store.permissionRules.add('ann', { toolName: 'web_fetch' });
      store.permissionRules.add('ann', { toolName: 'web_fetch' });
      store.permissionRules.add('bob', { toolName: 'write_file', pathPrefix: '/work' });
      expect(store.permissionRules.all()).toEqual([
        { userId: 'ann', rule: { toolName: 'bash', command: 'ls' } },
        { userId: 'ann', rule: { toolName: 'web_fetch' } },
        { userId: 'bob', rule: { toolName: 'write_file', pathPrefix: '/work' } },
      ]);
      store.permissionRules.remove('ann', { toolName: 'web_fetch' });
      expect(store.permissionRules.forUser('ann')).toEqual([{ toolName: 'bash', command: 'ls' }]);
    });

    it('keeps what each model taught the token estimate', async () => {
      const { store } = await fresh();
      expect(store.tokenCalibration.load('m')).toBeUndefined();
      store.tokenCalibration.save('m', { samples: 3, ratio: 0.9 });
      store.tokenCalibration.save('m', { samples: 4, ratio: 0.8 });
      expect(store.tokenCalibration.load('m')).toEqual({ samples: 4, ratio: 0.8 });
    });
  });
}
