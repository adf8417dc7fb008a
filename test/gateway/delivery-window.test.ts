import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/core/clock.js';
import type { OutboundMessage, SendOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { Delivery, type DeliveryOptions } from '../../src/gateway/delivery.js';
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

function deliveryOn(path: string, channel: MemoryChannel, clock: Clock = systemClock, options: DeliveryOptions = {}): Delivery {
  const db = openDatabase(path);
  open.push(db);
  const delivery = new Delivery(new SqliteOutbox(db), clock, logger, { retryBaseMs: 20, ...options });
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

  it('a kill while a live message created by the finished answer ends: the answer once, though its rows, the message and the stored answer share one millisecond', async () => {
    const path = join(tempDir('hob-window-'), 'hob.db');
    // Time stands still: the session stores the answer, the outbox records its row, the live
    // message shows, all in the same millisecond.
    const clock: Clock = { now: () => 1_800_000_000_000 };
    const storedAt = clock.now();
    const answerSince: DeliveryOptions['answerSince'] = (key, since) => (key === 'k' && storedAt >= since ? 'The answer.' : undefined);
    const dying = new MemoryChannel();
    const first = deliveryOn(path, dying, clock, { answerSince });
    const target = { chatId: 'c', threadId: 't' };
    const recorder = first.liveRecorder('memory', target, 'k');
    // Nothing showed while the model wrote (a quick answer): the answer gets its own row, then
    // the live view shows it whole (a stream started by its final text) and the process is
    // killed before the platform ends it.
    void first.sendAnswer('memory', target, [{ text: 'The answer.' }], 'k', {
      liveRow: () => undefined,
      adopt: async () => {
        const { id } = recorder.creating('The answer.');
        recorder.started(id, await dying.send(target, { text: 'The answer.' }));
        return new Promise<undefined>(() => undefined);
      },
      decline: async () => undefined,
    });
    await dying.waitFor(() => dying.chat('c').length > 0, 5000, 'the live message');

    // Restarted on the same chat: the live message or the answer's row, not both.
    const delivery = deliveryOn(path, dying, clock, { answerSince });
    delivery.releaseLeases();
    await delivery.flush();
    await delivery.flush();
    expect(dying.chat('c').map((message) => message.text)).toEqual(['The answer.']);
  });
});
