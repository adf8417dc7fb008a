import '../support/env.js';
import { describe, expect, it } from 'vitest';
import type { InboundMessage, InboundSink } from '../../src/gateway/channel.js';
import { adapter, fake, useTelegramTestbed } from '../support/telegram-testbed.js';

/** Several hob processes on one bot, each an adapter of its own against the one fake Telegram. */

useTelegramTestbed();

const webhook = { url: 'https://hob.example.com/telegram', secretToken: 'team-secret_1', port: 0, host: '127.0.0.1' };
const people = [1, 2, 3, 4, 5].map((id) => ({ id: 100 + id, first_name: `Person${id}` }));

function hobProcess() {
  const messages: InboundMessage[] = [];
  const notices: string[] = [];
  const sink: InboundSink = { message: (message) => void messages.push(message), button: () => {} };
  return { messages, notices, sink };
}

describe('Telegram from several processes', () => {
  it('webhook mode behind a load balancer: updates spread over the processes, each handled once, and one stopping leaves the webhook to the others', async () => {
    const [one, two] = [hobProcess(), hobProcess()];
    const first = adapter({ webhook });
    const second = adapter({ webhook });
    await first.start(one.sink);
    await second.start(two.sink);
    fake.balanceWebhook([first, second].map((telegram) => `http://127.0.0.1:${telegram.webhookAddress?.port}/telegram`));

    for (const person of people.slice(0, 4)) fake.sendText(person, { id: person.id, type: 'private' }, `hello from ${person.first_name}`);
    await fake.waitFor(() => one.messages.length + two.messages.length === 4);
    // Round robin: two each, no update in both.
    expect(one.messages.map((message) => message.text)).toEqual(['hello from Person1', 'hello from Person3']);
    expect(two.messages.map((message) => message.text)).toEqual(['hello from Person2', 'hello from Person4']);
    // Both set the same webhook (setWebhook is idempotent); neither polls.
    expect(fake.callsOf('setWebhook').map((call) => call.body.url)).toEqual([webhook.url, webhook.url]);
    expect(fake.callsOf('getUpdates')).toEqual([]);

    await first.stop();
    expect(fake.callsOf('deleteWebhook')).toEqual([]);
    const last = people[4] as (typeof people)[number];
    fake.sendText(last, { id: last.id, type: 'private' }, 'after one process stopped');
    // The process hands the update on before its 200 reaches the fake: wait for both.
    await fake.waitFor(() => two.messages.length === 3 && fake.webhookDeliveries.at(-1)?.status === 200);
    expect(two.messages[2]?.text).toBe('after one process stopped');
    expect(one.messages).toHaveLength(2);
    // The balancer tried the stopped process first, then the live one.
    expect(fake.webhookDeliveries.slice(-2).map((delivery) => delivery.status)).toEqual(['unreachable', 200]);
  });

  it('a second long poller of the same bot cuts off the first, which tells the person running hob to use webhook mode', async () => {
    const [one, two] = [hobProcess(), hobProcess()];
    // No restart within the test: the first poller stays cut off once.
    const first = adapter({ pollRestartDelayMs: 60_000, notice: (sentence) => void one.notices.push(sentence) });
    await first.start(one.sink);
    await fake.waitFor(() => fake.isPolling);
    const second = adapter({ pollRestartDelayMs: 60_000, notice: (sentence) => void two.notices.push(sentence) });
    await second.start(two.sink);

    await fake.waitFor(() => one.notices.length === 1);
    expect(one.notices[0]).toMatch(/^Telegram cut off this long poll \(409 Conflict\): another process polls the same bot.*webhook mode \(channels\.telegram\.webhook\)/);
    // /healthz shows the cut-off process as down, the one polling as up.
    expect(first.down).toBe(one.notices[0]);
    expect(second.down).toBeUndefined();
    const person = people[0] as (typeof people)[number];
    fake.sendText(person, { id: person.id, type: 'private' }, 'who gets this?');
    await fake.waitFor(() => two.messages.length === 1);
    expect(one.messages).toEqual([]);
    expect(two.notices).toEqual([]);
  });
});
