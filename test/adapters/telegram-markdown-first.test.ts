import '../support/env.js';
import { adapter, fake, useTelegramTestbed } from '../support/telegram-testbed.js';
import { describe, expect, it } from 'vitest';

/**
 * The Markdown walk (marked) loads on first need, not at start (adapters/telegram/html.ts): a
 * plain answer never needs it. The first message that does waits for it, here a file whose
 * only text is its caption, sent before hob was ever idle: its formatting shows all the same.
 */

useTelegramTestbed();

describe('Telegram adapter: the first Markdown after a start', () => {
  it('is formatted, even as the caption of a file sent before anything loaded the Markdown walk', async () => {
    await adapter().send({ chatId: '42' }, { text: '', file: { name: 'notes.txt', data: Buffer.from('n'), caption: 'Your **notes** and `code`' } });
    expect(fake.chat(42)).toMatchObject([{ kind: 'document', text: 'Your notes and code', entities: [{ type: 'bold', offset: 5, length: 5 }, { type: 'code', offset: 15, length: 4 }] }]);
  });
});
