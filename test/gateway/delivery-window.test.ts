import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { OutboundMessage, SendOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { Delivery } from '../../src/gateway/delivery.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase, type Db } from '../../src/store/sqlite/db.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { tempDir } from '../support/engine.js';

/**
 * A platform that sends a message in parts (as Telegram does past 4096 characters, here at
 * each `---` line) and can "die" after a given part: the process is killed mid-send.
 */
class PartsChannel extends MemoryChannel {
  died = false;

  constructor(private readonly dieAfterPart?: number) {
    super();
  }

  override async send(target: Target, message: OutboundMessage, options: SendOptions = {}): Promise<SentRef> {
    const parts = message.text.split('\n---\n');
    let last: SentRef | undefined;
    for (let index = options.skipParts ?? 0; index < parts.length; index++) {
      last = await super.send(target, { ...message, text: parts[index] ?? '' });
      if (index === parts.length - 1) break;
      options.onPartSent?.(index + 1, last.messageId, false);
      if (this.dieAfterPart === index + 1) {
        this.died = true;
        return new Promise<SentRef>(() => undefined);
      }
    }
    return last as SentRef;
  }
}

const logger = createLogger({ level: 'silent', destination: 'silent' });
const open: Db[] = [];
const stoppers: Delivery[] = [];
afterEach(async () => {
  for (const delivery of stoppers.splice(0)) await delivery.stop(100);
  for (const db of open.splice(0)) db.close();
});

function deliveryOn(path: string, channel: MemoryChannel): Delivery {
  const db = openDatabase(path);
  open.push(db);
  const delivery = new Delivery(new SqliteOutbox(db), systemClock, logger, { retryBaseMs: 20 });
  delivery.register(channel);
  stoppers.push(delivery);
  return delivery;
}

describe('the delivery window after a kill', () => {
  it('a kill between the parts of a long message resends only the parts not yet in the chat', async () => {
    const path = join(tempDir('hob-window-'), 'hob.db');
    const dying = new PartsChannel(2);
    void deliveryOn(path, dying).send('memory', { chatId: 'c' }, { text: 'part A\n---\npart B\n---\npart C' });
    await dying.waitFor(() => dying.died, 5000, 'two parts out');

    // Restarted: the leases of the dead process are released and the worker picks the row up.
    const restarted = new PartsChannel();
    const delivery = deliveryOn(path, restarted);
    delivery.releaseLeases();
    delivery.start(10);
    await restarted.waitFor(() => restarted.chat('c').length > 0, 5000, 'the rest');
    const seen = [...dying.chat('c'), ...restarted.chat('c')].map((m) => m.text);
    expect(seen).toEqual(['part A', 'part B', 'part C']);
  });
});
