/**
 * issue 23: two `hob start` processes on one database behind the fake Telegram's webhook
 * balancer (updates take turns between the processes): every message of many conversations
 * is answered once and in order, whichever process the balancer gave it to.
 */
import '../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { answerTokens, freePort, people, startNode, type HobNode } from '../support/hob-cluster.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';

const CONVERSATIONS = 20;
const users = Array.from({ length: CONVERSATIONS }, (_, index) => ({ id: 1000 + index, first_name: `Person${index}` }));

let model: FakeAnthropic;
let slack: FakeSlack;
let telegram: FakeTelegram;
let nodes: HobNode[] = [];

describe.skipIf(postgresSkipReason)('several hob processes behind a Telegram webhook', () => {
  beforeAll(async () => {
    const { url } = await testDatabase();
    model = await startFakeAnthropic();
    slack = await startFakeSlack();
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    answerTokens(model);
    const ports = [await freePort(), await freePort()];
    const allow = users.map((user) => String(user.id));
    nodes = await Promise.all(ports.map((port) => startNode({ model, slack, people: people(1), url, leaseMs: 1500, telegram: { token: telegram.token, apiRoot: telegram.apiRoot, port, allow } })));
    telegram.balanceWebhook(ports.map((port) => `http://127.0.0.1:${port}/telegram`));
  }, 90_000);

  afterAll(async () => {
    for (const node of nodes) node.kill();
    await model?.close();
    await slack?.close();
    await telegram?.close();
  });

  it('answers every message once and in order, the updates spread over both processes', async () => {
    const answers = (id: number) => telegram.chat(id).map((message) => message.text.replace(/^answer /, ''));
    await Promise.all(
      users.map(async (user, index) => {
        for (const n of [1, 2]) {
          const token = `c${index}-m${n}`;
          telegram.sendText(user, { id: user.id, type: 'private' }, `please answer ${token}`);
          await telegram.waitFor(() => answers(user.id).includes(token), 30_000, `the answer to ${token}`);
        }
      }),
    );
    for (const [index, user] of users.entries()) expect(answers(user.id)).toEqual([`c${index}-m1`, `c${index}-m2`]);
    const targets = new Set(telegram.webhookDeliveries.filter((delivery) => delivery.status === 200).map((delivery) => delivery.target));
    expect(targets.size).toBe(2);
  }, 90_000);
});
