import { describe, expect, it } from 'vitest';
import { encodeOutboxMessage } from '../../../src/store/outbox-message.js';
import type { NewTask, TaskKind } from '../../../src/store/tasks.js';
import { useStore, type StoreFactory } from './harness.js';

function task(id: string, personId: string, createdAt: number, kind: TaskKind = 'task'): NewTask {
  return { id, kind, personId, userId: personId, originSession: `memory:${personId}`, platform: 'memory', chatId: personId, threadId: undefined, agent: undefined, description: `do ${id}`, prompt: `please do ${id}`, createdAt };
}
const spent = { toolUses: 2, inputTokens: 300, outputTokens: 40, costUsd: 0.25 };
const alive = () => false;

/** Background tasks and workers: whose they are, one end each, one runner at a time. */
export function tasksContract(factory: StoreFactory): void {
  const fresh = useStore(factory);

  describe(`tasks (${factory.kind})`, () => {
    it("shows a person only their own tasks, open ones first, and sums what they spent", async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.tasks.insert(task('t1', 'ann', now));
      store.tasks.insert(task('t2', 'ann', now + 1), { runner: 'r1', leaseUntil: undefined });
      store.tasks.insert(task('t3', 'bob', now + 2));
      store.tasks.insert(task('w1', 'ann', now + 3, 'worker'), { runner: 'r1', leaseUntil: undefined });
      store.tasks.finish('t1', { ...spent, status: 'completed', result: 'done' }, now + 10);
      store.tasks.finish('w1', { ...spent, status: 'completed', result: 'looked' }, now + 10);
      expect(store.tasks.getFor('t3', 'ann')).toBeUndefined();
      expect(store.tasks.getFor('t1', 'ann')).toMatchObject({ status: 'completed', result: 'done', ...spent, finishedAt: now + 10 });
      expect(store.tasks.get('t2')).toMatchObject({ status: 'running', runner: 'r1', startedAt: now + 1, threadId: undefined, agent: undefined });
      expect(store.tasks.listFor('ann').map((row) => row.id)).toEqual(['t2', 't1']);
      expect(store.tasks.openCount('ann', 'task')).toBe(1);
      expect(store.tasks.open('task').map((row) => row.id)).toEqual(['t2', 't3']);
      expect(store.tasks.spentBy('ann')).toEqual({ tasks: 2, workers: 1, toolUses: 4, inputTokens: 600, outputTokens: 80, costUsd: 0.5 });
      expect(store.tasks.spentBy('ann', now + 2)).toMatchObject({ tasks: 0, workers: 1 });
      expect(store.tasks.spentBy('carl')).toEqual({ tasks: 0, workers: 0, toolUses: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });
    });

    it('ends a task once, with its message to the chat recorded in the same transaction, and notes it once', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.tasks.insert(task('t1', 'ann', now), { runner: 'r1', leaseUntil: undefined });
      store.tasks.recordSpend('t1', { toolUses: 1, inputTokens: 10, outputTokens: 5, costUsd: 0.01 });
      expect(store.tasks.get('t1')).toMatchObject({ toolUses: 1, inputTokens: 10 });
      const deliver = () => store.outbox.add({ platform: 'memory', chatId: 'ann', message: encodeOutboxMessage({ text: 'done' }), now });
      expect(() =>
        store.tasks.finish('t1', { ...spent, status: 'completed' }, now, () => {
          throw new Error('the outbox is full');
        }),
      ).toThrow('the outbox is full');
      expect(store.tasks.get('t1')?.status).toBe('running');
      expect(store.tasks.finish('t1', { ...spent, status: 'completed', result: 'done' }, now + 5, deliver)).toBe(true);
      expect(store.tasks.finish('t1', { ...spent, status: 'failed', error: 'late' }, now + 6, deliver)).toBe(false);
      expect(store.outbox.counts().pending).toBe(1);
      expect(store.tasks.get('t1')).toMatchObject({ status: 'completed', outboxId: expect.any(Number), finishedAt: now + 5 });
      store.tasks.recordSpend('t1', { toolUses: 9, inputTokens: 9, outputTokens: 9, costUsd: 9 });
      expect(store.tasks.get('t1')?.toolUses).toBe(2);
      expect(store.tasks.unnoted('memory:ann').map((row) => row.id)).toEqual(['t1']);
      store.tasks.markNoted(['t1'], now + 7);
      expect(store.tasks.unnoted('memory:ann')).toEqual([]);
    });

    it('gives a task to one runner: queued ones once, running ones only when their runner is gone or its lease ran out', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.tasks.insert(task('queued', 'ann', now));
      store.tasks.insert(task('leased', 'ann', now + 1), { runner: 'a', leaseUntil: now + 10_000 });
      store.tasks.insert(task('unleased', 'ann', now + 2), { runner: 'a', leaseUntil: undefined });
      store.tasks.insert(task('dead', 'ann', now + 3), { runner: 'dead-runner', leaseUntil: undefined });
      const claimB = { runner: 'b', leaseUntil: now + 10_000 };
      const isGone = (runner: string) => runner === 'dead-runner';
      expect(store.tasks.claimOrphans('task', claimB, now, isGone).map((row) => [row.id, row.runner, row.status])).toEqual([
        ['queued', 'b', 'running'],
        ['dead', 'b', 'running'],
      ]);
      expect(store.tasks.claimOrphans('task', { runner: 'c', leaseUntil: now + 10_000 }, now, isGone)).toEqual([]);
      expect(store.tasks.claimOrphans('worker', claimB, now, isGone)).toEqual([]);
      // b may not take a's task by marking it; a may keep marking its own.
      expect(store.tasks.markRunning('leased', claimB, now)).toBe(false);
      expect(store.tasks.markRunning('leased', { runner: 'a', leaseUntil: now + 10_000 }, now)).toBe(true);
      expect(store.tasks.renew('a', now + 20_000).sort()).toEqual(['leased', 'unleased']);
      // a stops renewing (its process died): after its lease, b takes a's rows over (and keeps its own).
      clock.advance(25_000);
      expect(store.tasks.claimOrphans('task', { runner: 'b', leaseUntil: clock.now() + 10_000 }, clock.now(), alive).map((row) => row.id)).toEqual(['queued', 'leased', 'unleased', 'dead']);
      expect(store.tasks.get('leased')).toMatchObject({ runner: 'b', leaseUntil: clock.now() + 10_000, startedAt: now + 1 });
      expect(store.tasks.renew('a', clock.now() + 10_000)).toEqual([]);
      expect(store.tasks.markRunning('leased', { runner: 'a', leaseUntil: clock.now() + 10_000 }, clock.now())).toBe(false);
      // A row ended elsewhere is no longer renewed by its runner.
      store.tasks.finish('dead', { ...spent, status: 'stopped' }, clock.now());
      expect(store.tasks.renew('b', clock.now() + 10_000).sort()).toEqual(['leased', 'queued', 'unleased']);
      expect(store.tasks.claimOrphans('task', { runner: 'c', leaseUntil: undefined }, clock.now(), alive)).toEqual([]);
    });
  });
}
