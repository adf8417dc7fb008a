import { describe, expect, it } from 'vitest';
import { encodeOutboxMessage } from '../../../src/store/outbox-message.js';
import { useStore, type StoreFactory } from './harness.js';

const text = (value: string) => encodeOutboxMessage({ text: value });

/** Inbox, outbox, approvals and pairing: what comes in, what goes out, and who may. */
export function deliveryContract(factory: StoreFactory): void {
  const fresh = useStore(factory);

  describe(`inbox (${factory.kind})`, () => {
    it('takes each update once, keeps the queue in order, and marks rows done with the work in one commit', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const first = store.inbox.add({ platform: 'telegram', updateId: '1', sessionKey: 'k', message: 'm1', now });
      expect(store.inbox.add({ platform: 'telegram', updateId: '1', sessionKey: 'k', message: 'again', now })).toBeUndefined();
      const second = store.inbox.add({ platform: 'telegram', updateId: '2', sessionKey: 'k', message: 'm2', now });
      expect(store.inbox.addDone({ platform: 'telegram', updateId: '3', sessionKey: 'k', now })).toBe(true);
      expect(store.inbox.addDone({ platform: 'telegram', updateId: '3', sessionKey: 'k', now })).toBe(false);
      store.inbox.setBatch([first as number, second as number]);
      expect(store.inbox.queued()).toEqual([
        { id: first, platform: 'telegram', sessionKey: 'k', message: 'm1', batch: first },
        { id: second, platform: 'telegram', sessionKey: 'k', message: 'm2', batch: first },
      ]);
      expect(() =>
        store.inbox.markDoneWith([first as number], () => {
          throw new Error('the engine failed');
        }),
      ).toThrow('the engine failed');
      expect(store.inbox.queued()).toHaveLength(2);
      store.inbox.markDoneWith([first as number], () => undefined);
      expect(store.inbox.queued().map((row) => row.id)).toEqual([second]);
      expect(store.inbox.latestFor('k')).toBe('m1');
    });
  });

  describe(`outbox (${factory.kind})`, () => {
    it('an answer stored for the end of the turn: written at once, its error thrown, on disk once committed', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const stored = store.transactionInTurn(() => store.outbox.add({ platform: 'telegram', chatId: 'A', message: text('answer'), now, leaseUntil: now + 120_000 }));
      expect(store.outbox.counts().pending).toBe(1);
      expect(() =>
        store.transactionInTurn(() => {
          store.outbox.add({ platform: 'telegram', chatId: 'B', message: text('lost'), now, leaseUntil: now + 120_000 });
          throw new Error('the disk said no');
        }),
      ).toThrow('the disk said no');
      await stored.committed;
      expect(store.outbox.counts().pending).toBe(1);
      store.outbox.markSent(stored.value, 'm1', now);
      expect(store.outbox.counts()).toMatchObject({ pending: 0, sent: 1 });
    });

    it('leases a send, marks it sent, and gives due rows oldest first', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const leased = store.outbox.add({ platform: 'slack', chatId: 'C1', message: text('first'), now, leaseUntil: now + 30_000 });
      const queued = store.outbox.add({ platform: 'slack', chatId: 'C1', threadId: 't', sessionKey: 'k', message: text('second'), now });
      expect(store.outbox.due(now).map((row) => row.id)).toEqual([queued]);
      expect(store.outbox.lease(queued, now, now + 30_000)).toBe(true);
      expect(store.outbox.lease(queued, now, now + 30_000)).toBe(false);
      store.outbox.markSent(leased, 'ts-1', now);
      expect(store.outbox.knownIds('slack', 'C1', now)).toEqual(new Set(['ts-1']));
      store.outbox.releaseLeases(now);
      const [row] = store.outbox.due(now);
      expect(row).toMatchObject({ id: queued, platform: 'slack', chatId: 'C1', threadId: 't', sessionKey: 'k', message: text('second'), attempts: 0, partsSent: 0, unconfirmed: true });
      expect(store.outbox.counts()).toEqual({ pending: 1, sent: 1, failed: 0, live: 0, withdrawn: 0 });
    });

    it('answers that landed together are sent for every reader at once: none is due again, even once its lease ran out', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const rows = ['C1', 'C2', 'C3'].map((chatId) => store.outbox.add({ platform: 'telegram', chatId, message: text(`to ${chatId}`), now, leaseUntil: now + 120_000 }));
      rows.forEach((id, at) => store.outbox.markSent(id, `m${at}`, now));
      // Read in the same moment the platform said so, and after the leases would have run out.
      expect(store.outbox.due(now + 600_000)).toEqual([]);
      expect(store.outbox.counts()).toMatchObject({ pending: 0, sent: 3 });
      expect(store.outbox.knownIds('telegram', 'C2', now)).toEqual(new Set(['m1']));
      const later = store.outbox.add({ platform: 'telegram', chatId: 'C1', message: text('next'), now, leaseUntil: now + 120_000 });
      expect(store.outbox.blockedBy(later, 'telegram', 'C1', now)).toBe(false);
    });

    it('keeps later messages to a chat behind one that failed, and counts retries', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const failing = store.outbox.add({ platform: 'discord', chatId: 'D', message: text('a'), now, leaseUntil: now + 1000 });
      const next = store.outbox.add({ platform: 'discord', chatId: 'D', message: text('b'), now, leaseUntil: now + 1000 });
      const otherChat = store.outbox.add({ platform: 'discord', chatId: 'E', message: text('c'), now, leaseUntil: now + 1000 });
      expect(store.outbox.blockedBy(next, 'discord', 'D', now)).toBe(false);
      store.outbox.markRetry(failing, 'HTTP 502', now + 5000, 1);
      expect(store.outbox.blockedBy(next, 'discord', 'D', now)).toBe(true);
      expect(store.outbox.blockedBy(otherChat, 'discord', 'E', now)).toBe(false);
      store.outbox.markPartsSent(failing, 0);
      const [row] = store.outbox.due(now + 5000);
      expect(row).toMatchObject({ id: failing, attempts: 1, partsSent: 1, unconfirmed: true });
      store.outbox.confirm(failing, 2);
      expect(store.outbox.due(now + 5000)[0]).toMatchObject({ partsSent: 2, unconfirmed: false });
      expect(store.outbox.cancel(next, 'no longer true')).toBe(true);
      expect(store.outbox.cancel(next, 'again')).toBe(false);
      store.outbox.markFailed(failing, 'gave up');
      expect(store.outbox.counts()).toMatchObject({ pending: 1, failed: 2 });
      store.outbox.defer(otherChat, 'waits in line', now + 60_000);
      expect(store.outbox.due(now + 59_000)).toEqual([]);
      expect(store.outbox.createdAt(otherChat)).toBe(now);
    });

    it('records live messages before they show, and settles them into the answer or away', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      const live = store.outbox.addLive({ platform: 'telegram', chatId: '42', sessionKey: 'k', preview: 'Thinking…', now });
      const gone = store.outbox.addLive({ platform: 'telegram', chatId: '42', preview: 'Working…', now });
      expect(store.outbox.liveRows().map((row) => [row.id, row.platformMessageId, row.preview, row.answer])).toEqual([
        [live, undefined, 'Thinking…', undefined],
        [gone, undefined, 'Working…', undefined],
      ]);
      store.outbox.setLiveMessage(live, '777');
      store.outbox.setLiveAnswer(live, text('the answer'));
      store.outbox.withdrawLive(gone);
      expect(store.outbox.liveRows()).toEqual([{ id: live, platform: 'telegram', chatId: '42', threadId: null, sessionKey: 'k', platformMessageId: '777', preview: 'Thinking…', createdAt: now, answer: text('the answer') }]);
      // An answer's row recorded before a live message of its session (in the same ms) holds the answer; live rows never do.
      const answerRow = store.outbox.add({ platform: 'telegram', chatId: '42', sessionKey: 'k', message: text('the answer'), now });
      const later = store.outbox.addLive({ platform: 'telegram', chatId: '42', sessionKey: 'k', preview: 'the answer', now });
      expect([store.outbox.answerRecordedBefore('k', later, now), store.outbox.answerRecordedBefore('k', answerRow, now), store.outbox.answerRecordedBefore('k', later, now + 1), store.outbox.answerRecordedBefore('other', later, now)]).toEqual([true, false, false, false]);
      store.outbox.withdrawLive(later);
      store.outbox.cancel(answerRow, 'not this test');
      store.outbox.liveToPending(live, now, now + 1000);
      expect(store.outbox.liveRows()).toEqual([]);
      expect(store.outbox.due(now + 1000).map((row) => [row.id, row.message])).toEqual([[live, text('the answer')]]);
      expect(store.outbox.counts()).toEqual({ pending: 1, sent: 0, failed: 1, live: 0, withdrawn: 2 });
    });
  });

  describe(`approvals and pairing (${factory.kind})`, () => {
    it('decides an approval once', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.approvals.insert({ id: 'ap1', sessionKey: 'k', toolUseId: 't1', requesterId: 'u1', platform: 'slack', chatId: 'C', threadId: null, toolName: 'bash', input: '{"command":"rm x"}', summary: 'rm x', createdAt: now, expiresAt: now + 60_000 });
      store.approvals.setOutbox('ap1', 9);
      store.approvals.setMessage('ap1', 'm-1');
      expect(store.approvals.pending().map((row) => [row.id, row.outboxId, row.messageId, row.decision])).toEqual([['ap1', 9, 'm-1', null]]);
      expect(store.approvals.decide('ap1', 'allow_once', 'u1', now)).toBe(true);
      expect(store.approvals.decide('ap1', 'deny', 'u2', now)).toBe(false);
      expect(store.approvals.get('ap1')).toMatchObject({ decision: 'allow_once', decidedBy: 'u1', threadId: null });
      expect(store.approvals.pending()).toEqual([]);
      expect(store.approvals.get('nope')).toBeUndefined();
    });

    it('approves a live pairing code once, and revokes it', async () => {
      const { store, clock } = await fresh();
      const now = clock.now();
      store.pairings.insert({ code: 'ABCD', platform: 'telegram', userId: '5', userName: 'Eve', chatId: '5', createdAt: now, expiresAt: now + 60_000 });
      store.pairings.insert({ code: 'OLD1', platform: 'telegram', userId: '6', userName: 'Old', chatId: '6', createdAt: now - 120_000, expiresAt: now - 60_000 });
      expect(store.pairings.pendingFor('telegram', '5', now)?.code).toBe('ABCD');
      expect(store.pairings.list(now).map((row) => row.code)).toEqual(['ABCD']);
      expect(store.pairings.approve('OLD1', 'owner', now)).toBeUndefined();
      expect(store.pairings.approve('abcd', 'owner', now)?.status).toBe('approved');
      expect(store.pairings.approve('ABCD', 'owner', now)).toBeUndefined();
      expect(store.pairings.isApproved('telegram', '5')).toBe(true);
      expect(store.pairings.revoke('telegram', '5', 'owner', now)).toBe(1);
      expect(store.pairings.isApproved('telegram', '5')).toBe(false);
      expect(store.pairings.byCode('abcd')?.status).toBe('revoked');
    });
  });
}
