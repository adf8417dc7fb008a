import '../support/env.js';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelegramAdapter, type TelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { systemClock } from '../../src/core/clock.js';
import { Delivery } from '../../src/gateway/delivery.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Db } from '../../src/store/sqlite/db.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { migratedDbFile } from '../support/migrated-db.js';

/**
 * A long answer goes out in parts. When a later part fails, the outbox retries only the parts
 * the chat does not have yet: the person reads every part once, in order.
 */

let fake: FakeTelegram;
let telegram: TelegramAdapter;
let db: Db;
let delivery: Delivery;

beforeEach(async () => {
  fake = await startFakeTelegram({ botUsername: 'hob_test_bot' });
  telegram = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: createLogger({ level: 'silent', destination: 'silent' }), autoRetryMaxDelaySeconds: 1 });
  db = openDatabase(migratedDbFile(join(tempDir('hob-delivery-'), 'hob.db')));
  delivery = new Delivery(new SqliteOutbox(db), systemClock, createLogger({ level: 'silent', destination: 'silent' }), { retryBaseMs: 20 });
  delivery.register(telegram);
});

afterEach(async () => {
  await delivery.stop();
  await telegram.stop();
  await fake.close();
  db.close();
});

/** Three paragraphs of ~3,000 characters: three Telegram messages. */
const paragraphs = ['first', 'second', 'third'].map((word) => `${word} part: ${`${word} `.repeat(500).trim()}`);

describe('Telegram delivery of a message in parts', () => {
  it('resends only the parts that did not arrive when a later part fails', async () => {
    fake.failNext('sendMessage', { pass: true });
    fake.failNext('sendMessage', { disconnect: true });
    const first = await delivery.send('telegram', { chatId: '42' }, { text: paragraphs.join('\n\n') });
    expect(first).toBeUndefined(); // left to the outbox worker
    expect(fake.chat(42).map((message) => message.text.split(':')[0])).toEqual(['first part']);

    delivery.start(20);
    await fake.waitFor(() => fake.chat(42).length === 3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.chat(42).map((message) => message.text.split(':')[0])).toEqual(['first part', 'second part', 'third part']);
    expect(new SqliteOutbox(db).counts()).toMatchObject({ pending: 0, sent: 1, failed: 0 });
  });

  it('does not send the text before a file again when the file upload fails', async () => {
    fake.failNext('sendDocument', { disconnect: true });
    const long = paragraphs[0] ?? '';
    await delivery.send('telegram', { chatId: '42' }, { text: long, file: { name: 'notes.txt', data: Buffer.from('the notes') } });
    expect(fake.chat(42).map((message) => message.kind)).toEqual(['text']);

    delivery.start(20);
    await fake.waitFor(() => fake.chat(42).length === 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.chat(42).map((message) => message.kind)).toEqual(['text', 'document']);
    expect(fake.chat(42)[0]?.text).toBe(long);
  });
});
