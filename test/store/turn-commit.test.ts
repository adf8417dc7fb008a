import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeOutboxMessage } from '../../src/store/outbox-message.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { tempDir } from '../support/engine.js';

/**
 * On SQLite the answers stored in one turn of the event loop share one commit at its end
 * (src/store/sqlite/turn-commit.ts), and their sends wait for it. What a person would notice
 * if that went wrong: an answer in the chat that a restart does not know (sent before it was
 * on disk), one person's failed write taking another's answer with it, or a write that a
 * caller believes committed and a restart does not find.
 */
const clock = { now: () => Date.parse('2026-12-01T10:00:00Z') };
const opened: { close(): void }[] = [];
afterEach(() => {
  for (const one of opened.splice(0).reverse()) one.close();
});

function stores(): { store: SqliteStore; chatsOnDisk: () => string[] } {
  const path = join(tempDir('hob-turn-commit-'), 'hob.db');
  const store = openSqliteStore(path, { clock });
  // Another connection to the file: what another process (or the next start) reads.
  const reader = new Database(path, { readonly: true });
  opened.push(store, reader);
  const chatsOnDisk = () => (reader.prepare('SELECT chat_id FROM outbox ORDER BY id').all() as { chat_id: string }[]).map((row) => row.chat_id);
  return { store, chatsOnDisk };
}

const answerRow = (store: SqliteStore, chatId: string) => {
  const now = clock.now();
  return store.outbox.add({ platform: 'telegram', chatId, message: encodeOutboxMessage({ text: `answer for ${chatId}` }), now, leaseUntil: now + 120_000 });
};

describe('the turn’s commit on SQLite', () => {
  it('answers stored in one turn are on disk together at its end, and not before', async () => {
    const { store, chatsOnDisk } = stores();
    const first = store.transactionInTurn(() => answerRow(store, 'A'));
    const second = store.transactionInTurn(() => answerRow(store, 'B'));
    expect(first.value).toBeGreaterThan(0);
    expect(chatsOnDisk()).toEqual([]);
    // Read in the writing process, they are there at once.
    expect(store.outbox.counts().pending).toBe(2);
    await Promise.all([first.committed, second.committed]);
    expect(chatsOnDisk()).toEqual(['A', 'B']);
  });

  it('a write that fails is undone alone: the other answers of the turn are committed', async () => {
    const { store, chatsOnDisk } = stores();
    const first = store.transactionInTurn(() => answerRow(store, 'A'));
    expect(() =>
      store.transactionInTurn(() => {
        answerRow(store, 'B');
        throw new Error('the disk said no');
      }),
    ).toThrow('the disk said no');
    const third = store.transactionInTurn(() => answerRow(store, 'C'));
    await Promise.all([first.committed, third.committed]);
    expect(chatsOnDisk()).toEqual(['A', 'C']);
  });

  it('another transaction in the same turn commits the waiting answers with its own before it returns', async () => {
    const { store, chatsOnDisk } = stores();
    const first = store.transactionInTurn(() => answerRow(store, 'A'));
    store.transaction(() => answerRow(store, 'B'));
    expect(chatsOnDisk()).toEqual(['A', 'B']);
    await first.committed;
    // The next answer starts a turn's transaction of its own.
    const next = store.transactionInTurn(() => answerRow(store, 'C'));
    expect(chatsOnDisk()).toEqual(['A', 'B']);
    await next.committed;
    expect(chatsOnDisk()).toEqual(['A', 'B', 'C']);
  });

  it('a commit that fails reaches every answer of the turn, leaves none behind, and the store goes on', async () => {
    const { store, chatsOnDisk } = stores();
    const first = store.transactionInTurn(() => answerRow(store, 'A'));
    const second = store.transactionInTurn(() => {
      answerRow(store, 'B');
      // A foreign key checked only at the commit, pointing nowhere: SQLite refuses the commit.
      store.db.pragma('defer_foreign_keys = ON');
      store.db.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES ('no such session', 'user', '[]', 0)").run();
    });
    await expect(first.committed).rejects.toThrow(/FOREIGN KEY/);
    await expect(second.committed).rejects.toThrow(/FOREIGN KEY/);
    expect(chatsOnDisk()).toEqual([]);
    expect(store.db.inTransaction).toBe(false);
    const after = store.transactionInTurn(() => answerRow(store, 'C'));
    await after.committed;
    expect(chatsOnDisk()).toEqual(['C']);
  });

  it('a transaction whose commit takes the waiting answers along hears when that commit fails', async () => {
    const { store, chatsOnDisk } = stores();
    const first = store.transactionInTurn(() => {
      answerRow(store, 'A');
      store.db.pragma('defer_foreign_keys = ON');
      store.db.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES ('no such session', 'user', '[]', 0)").run();
    });
    expect(() => store.transaction(() => answerRow(store, 'B'))).toThrow(/FOREIGN KEY/);
    await expect(first.committed).rejects.toThrow(/FOREIGN KEY/);
    expect(chatsOnDisk()).toEqual([]);
    store.transaction(() => answerRow(store, 'C'));
    expect(chatsOnDisk()).toEqual(['C']);
  });

  it('closing the store commits the answers that wait', () => {
    const { store, chatsOnDisk } = stores();
    store.transactionInTurn(() => answerRow(store, 'A'));
    store.close();
    expect(chatsOnDisk()).toEqual(['A']);
  });

  it('inside another transaction an answer is part of it, committed when it is', async () => {
    const { store, chatsOnDisk } = stores();
    let inner: Promise<void> | undefined;
    store.transaction(() => {
      answerRow(store, 'A');
      inner = store.transactionInTurn(() => answerRow(store, 'B')).committed;
    });
    expect(chatsOnDisk()).toEqual(['A', 'B']);
    await inner;
  });
});
