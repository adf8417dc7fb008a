import Database from 'better-sqlite3';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.js';
import type { AppendOptions } from '../../src/store/conversations.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * A quick answer and the outbox row that carries it to the chat are one commit: there is no
 * moment in which the answer is in the history but due nowhere, so a kill right after the
 * engine stored it still reaches the person after the restart (before, that kill lost it:
 * the row was written in a later commit).
 */

const running: TestGateway[] = [];
afterEach(async () => {
  for (const hob of running.splice(0)) await hob.close();
});

const dmOf = (channel: MemoryChannel) => channel.chat(`dm-${OWNER.id}`);

describe('the answer and its outbox row', () => {
  it('a kill the moment the answer is stored: after the restart the person gets it, once', async () => {
    const dir = tempDir('hob-answer-commit-');
    const first = new MemoryChannel();
    const hob = await startTestGateway(first, new ScriptedModel([{ text: 'Stored and sent.' }]), { dir });
    running.push(hob);
    // The kill: once the answer's write returns, nothing more reaches the file (the process is
    // gone before its next step; closing the file is how a test stops this one writing).
    const conversations = hob.deps.conversations;
    let killed = false;
    hob.deps.conversations = Object.assign(Object.create(conversations) as typeof conversations, {
      appendMessage(sessionId: string, message: Message, options?: AppendOptions) {
        conversations.appendMessage(sessionId, message, options);
        if (message.role === 'assistant' && options?.run === 'ends') {
          killed = true;
          queueMicrotask(() => hob.store.close());
        }
      },
    });
    first.say(OWNER, 'answer me');
    await first.waitFor(() => killed && !hob.store.db.open, 5000, 'the answer stored, then the kill');
    expect(dmOf(first)).toEqual([]);

    const after = new MemoryChannel();
    const restarted = await startTestGateway(after, new ScriptedModel([]), { dir });
    running.push(restarted);
    restarted.gateway.delivery.start(20);
    await after.waitFor(() => dmOf(after).length > 0, 5000, 'the stored answer delivered');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(dmOf(after).map((message) => message.text)).toEqual(['Stored and sent.']);
  });

  it('a quick answer is sent once, from the row recorded with it', async () => {
    const channel = new MemoryChannel();
    const hob = await startTestGateway(channel, new ScriptedModel([{ text: 'One.' }, { text: 'Two.' }]));
    running.push(hob);
    channel.say(OWNER, 'first');
    await channel.waitFor(() => dmOf(channel).length === 1, 5000, 'the first answer');
    channel.say(OWNER, 'second');
    await channel.waitFor(() => dmOf(channel).length === 2, 5000, 'the second answer');
    expect(dmOf(channel).map((message) => message.text)).toEqual(['One.', 'Two.']);
    // Marked sent as the platform took each: nothing left for the worker to send again.
    await channel.waitFor(() => hob.store.outbox.counts().sent === 2, 5000, 'both marked sent');
    expect(hob.store.outbox.counts()).toMatchObject({ pending: 0, sent: 2, failed: 0 });
  });

  it('people answered at once: each answer is on disk, with the row that carries it, before it reaches the chat', async () => {
    const channel = new MemoryChannel();
    const hob = await startTestGateway(channel, new ScriptedModel([{ text: 'For you.' }, { text: 'For you.' }]));
    running.push(hob);
    // What a restart would read at the moment the platform receives each answer.
    const reader = new Database(join(hob.dir, 'hob.db'), { readonly: true });
    const onDisk: { answers: number; rows: number }[] = [];
    channel.onSend = () => {
      const answers = (reader.prepare("SELECT COUNT(*) n FROM messages WHERE role = 'assistant'").get() as { n: number }).n;
      const rows = (reader.prepare('SELECT COUNT(*) n FROM outbox').get() as { n: number }).n;
      onDisk.push({ answers, rows });
    };
    try {
      channel.say(OWNER, 'both at once');
      channel.say(FRIEND, 'both at once');
      await channel.waitFor(() => dmOf(channel).length === 1 && channel.chat(`dm-${FRIEND.id}`).length === 1, 5000, 'both answers');
      expect(onDisk).toHaveLength(2);
      for (const [index, seen] of onDisk.entries()) {
        expect(seen.answers).toBeGreaterThanOrEqual(index + 1);
        expect(seen.rows).toBeGreaterThanOrEqual(index + 1);
      }
    } finally {
      reader.close();
    }
  });

  it('the commit that stores an answer fails: the person gets the answer all the same, and the log names the conversation', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const channel = new MemoryChannel();
    // Bob's run is still playing when Ann's answer is stored, so hers waits for the turn's commit.
    let resume!: () => void;
    const bobWaits = new Promise<void>((resolve) => (resume = resolve));
    const said = (request: ProviderRequest) => JSON.stringify(request.messages.at(-1)?.content ?? '');
    const model = new ScriptedModel([
      (request) => (said(request).includes('from Bob') ? { text: 'Later, Bob.', pauseAt: 3, resume: bobWaits } : { text: 'Here it is.' }),
      (request) => (said(request).includes('from Bob') ? { text: 'Later, Bob.', pauseAt: 3, resume: bobWaits } : { text: 'Here it is.' }),
      { text: 'And again.' },
    ]);
    const hob = await startTestGateway(channel, model, { logger });
    running.push(hob);
    const store = hob.store;
    const inTurn = store.transactionInTurn.bind(store);
    let failOnce = true;
    store.transactionInTurn = <T>(fn: () => T) =>
      inTurn(() => {
        const value = fn();
        if (failOnce) {
          failOnce = false;
          // A foreign key checked only at the commit, pointing nowhere: SQLite refuses the commit.
          store.db.pragma('defer_foreign_keys = ON');
          store.db.prepare("INSERT INTO messages (session_id, role, content, created_at) VALUES ('no such session', 'user', '[]', 0)").run();
        }
        return value;
      });
    channel.say(FRIEND, 'from Bob');
    channel.say(OWNER, 'answer me');
    await channel.waitFor(() => dmOf(channel).length === 1, 5000, 'the answer');
    expect(dmOf(channel).map((message) => message.text)).toEqual(['Here it is.']);
    expect(failOnce).toBe(false);
    const failure = lines.map((line) => JSON.parse(line) as { msg: string; session?: string; err?: string }).find((entry) => entry.msg.startsWith('could not store the answer'));
    expect(failure?.session).toBe(`memory:dm-${OWNER.id}`);
    expect(failure?.err).toMatch(/FOREIGN KEY/);
    // Bob's run goes on and is answered.
    resume();
    await channel.waitFor(() => channel.chat(`dm-${FRIEND.id}`).length === 1, 5000, "Bob's answer");
    expect(channel.chat(`dm-${FRIEND.id}`).map((message) => message.text)).toEqual(['Later, Bob.']);
    // Each sent from a row, marked sent: nothing for the worker to send again.
    await channel.waitFor(() => store.outbox.counts().sent === 2, 5000, 'both answers marked sent');
    expect(store.outbox.counts()).toMatchObject({ pending: 0, sent: 2 });
    // Ann's conversation goes on.
    channel.say(OWNER, 'again');
    await channel.waitFor(() => dmOf(channel).length === 2, 5000, 'the next answer');
    expect(dmOf(channel)[1]?.text).toBe('And again.');
  });
});
