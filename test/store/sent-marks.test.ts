import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeOutboxMessage } from '../../src/store/outbox-message.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';

/**
 * The SQLite outbox writes "sent" marks at the end of the event loop's turn, the turn's marks
 * in one commit (src/store/sqlite/outbox.ts). What a person would notice if that lost one: an
 * answer sent a second time after a restart. A stop right after the platform took the answers
 * must keep every mark, and no rollback of other work may unsay one.
 */
describe('sent marks on SQLite', () => {
  const clock = { now: () => Date.parse('2026-12-01T10:00:00Z') };
  const text = (value: string) => encodeOutboxMessage({ text: value });

  it('a stop right after the platform took answers keeps them marked: the next start sends none of them again', () => {
    const path = join(tempDir('hob-sent-marks-'), 'hob.db');
    const first = openSqliteStore(path, { clock });
    const now = clock.now();
    const rows = ['A', 'B', 'C'].map((chatId) => first.outbox.add({ platform: 'telegram', chatId, message: text(chatId), now, leaseUntil: now + 120_000 }));
    // A fourth send is still in flight: the three marks wait for it (or for the end of the turn).
    const still = first.outbox.add({ platform: 'telegram', chatId: 'D', message: text('D'), now, leaseUntil: now + 120_000 });
    rows.forEach((id, at) => first.outbox.markSent(id, `m${at}`, now));
    first.close(); // in the same turn: the marks have not been written on their own yet

    const next = openSqliteStore(path, { clock });
    try {
      next.outbox.releaseLeases(now); // what a start does with the rows the last process was sending
      // Only the send that was cut off is looked up and sent again; the three that landed are not.
      expect(next.outbox.due(now + 600_000).map((row) => row.id)).toEqual([still]);
      expect(next.outbox.counts()).toMatchObject({ pending: 1, sent: 3 });
    } finally {
      next.close();
    }
  });

  it('marks waiting in a burst go out with the next commit of other work: a kill right after it sends none of them again', () => {
    const path = join(tempDir('hob-sent-marks-'), 'hob.db');
    const first = openSqliteStore(path, { clock });
    const now = clock.now();
    const rows = ['A', 'B'].map((chatId) => first.outbox.add({ platform: 'telegram', chatId, message: text(chatId), now, leaseUntil: now + 120_000 }));
    const still = first.outbox.add({ platform: 'telegram', chatId: 'C', message: text('C'), now, leaseUntil: now + 120_000 });
    rows.forEach((id, at) => first.outbox.markSent(id, `m${at}`, now)); // C is in flight: the marks wait
    // Another person's answer is stored in this turn: its commit takes the waiting marks along.
    const answer = first.transaction(() => first.outbox.add({ platform: 'telegram', chatId: 'D', message: text('D'), now, leaseUntil: now + 120_000 }));

    // Killed here: no close, no end of the turn. The next start reads the file as it is.
    const next = openSqliteStore(path, { clock });
    try {
      next.outbox.releaseLeases(now);
      expect(next.outbox.due(now + 600_000).map((row) => row.id).sort()).toEqual([still, answer].sort());
      expect(next.outbox.counts()).toMatchObject({ pending: 2, sent: 2 });
    } finally {
      next.close();
      first.close();
    }
  });

  it('marks a rolled-back transaction carried still wait, and are written at the end of the turn', async () => {
    const path = join(tempDir('hob-sent-marks-'), 'hob.db');
    const store = openSqliteStore(path, { clock });
    try {
      const now = clock.now();
      const sent = store.outbox.add({ platform: 'telegram', chatId: 'A', message: text('A'), now, leaseUntil: now + 120_000 });
      store.outbox.add({ platform: 'telegram', chatId: 'B', message: text('B'), now, leaseUntil: now + 120_000 });
      store.outbox.markSent(sent, 'm0', now);
      expect(() =>
        store.transaction(() => {
          store.outbox.add({ platform: 'telegram', chatId: 'C', message: text('C'), now });
          throw new Error('the answer could not be stored');
        }),
      ).toThrow('the answer could not be stored');
      await new Promise((resolve) => setImmediate(resolve));
      const reader = openSqliteStore(path, { clock });
      try {
        expect(reader.outbox.counts()).toMatchObject({ pending: 1, sent: 1 });
      } finally {
        reader.close();
      }
    } finally {
      store.close();
    }
  });

  it('a mark stands whatever the transaction around it does: the platform has the message either way', () => {
    const store = openSqliteStore(join(tempDir('hob-sent-marks-'), 'hob.db'), { clock });
    try {
      const now = clock.now();
      const inside = store.outbox.add({ platform: 'slack', chatId: 'C', message: text('inside'), now, leaseUntil: now + 1000 });
      const before = store.outbox.add({ platform: 'slack', chatId: 'E', message: text('before'), now, leaseUntil: now + 1000 });
      const other = store.outbox.add({ platform: 'slack', chatId: 'F', message: text('other'), now, leaseUntil: now + 1000 });
      store.outbox.markSent(before, 'ts-0', now); // taken earlier in this turn: its mark waits
      expect(() =>
        store.transaction(() => {
          store.outbox.markSent(inside, 'ts-1', now);
          // Read inside the transaction: both marks are seen here already.
          expect(store.outbox.knownIds('slack', 'E', now)).toEqual(new Set(['ts-0']));
          throw new Error('the rest of the work failed');
        }),
      ).toThrow('the rest of the work failed');
      expect(store.outbox.due(now + 2000).map((row) => row.id)).toEqual([other]);
      expect(store.outbox.knownIds('slack', 'C', now)).toEqual(new Set(['ts-1']));
      expect(store.outbox.counts()).toMatchObject({ pending: 1, sent: 2 });
    } finally {
      store.close();
    }
  });
});
