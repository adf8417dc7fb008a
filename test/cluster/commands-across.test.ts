/**
 * issue 23: two `hob start` processes on one PostgreSQL database and one Slack app. A
 * conversation runs in process A; its commands are typed through process B (the fake Slack
 * delivers them on B's connection). They act where the conversation runs and are answered once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { liftEditLimit, startNode, type HobNode } from '../support/hob-cluster.js';
import { postgresSkipReason } from '../support/postgres.js';
import { postgresDatabase } from '../support/postgres-fixture.js';

const A = 'a';
const B = 'b';

describe.skipIf(postgresSkipReason)('conversation commands across two hob processes on one database', () => {
  let model: FakeAnthropic;
  let slack: FakeSlack;
  const hobs: HobNode[] = [];
  const ann = { id: 'UANN', name: 'Ann' };
  const dm = dmOf(ann.id);
  const db = postgresDatabase();

  beforeAll(async () => {
    [model, slack] = await Promise.all([startFakeAnthropic(), startFakeSlack()]);
    liftEditLimit(slack);
    slack.person(ann);
    const { url } = db;
    hobs.push(...(await Promise.all([A, B].map((label) => startNode({ model, slack, people: [ann], url, label })))));
    await slack.waitFor(() => [A, B].every((label) => slack.socket.open().some((connection) => slack.socket.labels.get(connection) === label)), 10_000, 'both processes connected');
  }, 90_000);

  afterAll(async () => {
    for (const hob of hobs) hob.kill();
    await Promise.all(hobs.map((hob) => hob.exited));
    await slack?.close();
    await model?.close();
  });

  const said = () => slack.seen(dm).map((message) => message.text);
  const saidAfter = (before: number) => said().slice(before);

  /** Sends `text` on `label`'s connection; resolves with how many messages the DM showed before. */
  async function send(label: string, text: string): Promise<number> {
    const before = said().length;
    slack.socket.deliverOn = label;
    await slack.dm(ann, text);
    return before;
  }

  it('/status through B, while the run is in flight in A, is answered once with A\'s run', async () => {
    model.push({ text: 'The pineapple is noted.', usage: { input: 1234, output: 56 } });
    await send(A, 'remember the word pineapple');
    await slack.waitFor(() => said().includes('The pineapple is noted.'), 15_000, 'the first answer');

    const seen = model.requests.length;
    model.push({ text: 'Slow thoughts done.', delayMs: 3_000 });
    await send(A, 'think it over slowly');
    await slack.waitFor(() => model.requests.length > seen, 10_000, 'the slow model call');
    const before = await send(B, '/status');
    const status = await slack.waitFor(() => saidAfter(before).find((text) => text.startsWith('Model:')), 10_000, 'the status');
    // Only A, where the run is in flight, knows it is running; its figures include the first exchange.
    expect(status).toContain('State: running');
    expect(status).toContain('Tokens: 1,234 in, 56 out');
    expect(status).toMatch(/\(\d+ messages\)/);
    await slack.waitFor(() => said().includes('Slow thoughts done.'), 15_000, 'the slow answer');
    expect(said().filter((text) => text.startsWith('Model:'))).toHaveLength(1);
  }, 60_000);

  it('/new through B: the next message is answered once, in a fresh session that holds no earlier turn', async () => {
    const before = await send(B, '/new');
    await slack.waitFor(() => saidAfter(before).includes('Started a new conversation. I no longer see the earlier messages.'), 10_000, 'the /new reply');

    const seen = model.requests.length;
    model.push({ text: 'Hello, fresh start.' });
    await send(B, 'what word did I ask you to remember?');
    await slack.waitFor(() => said().includes('Hello, fresh start.'), 15_000, 'the answer in the new session');
    const request = model.requests[seen];
    expect(request?.body.messages).toHaveLength(1);
    expect(JSON.stringify(request?.body.messages)).not.toContain('pineapple');
    expect(said().filter((text) => text === 'Hello, fresh start.')).toHaveLength(1);
    expect(said().filter((text) => text.startsWith('Started a new conversation.'))).toHaveLength(1);

    // /usage through B: A's figures for the new session (one request so far), once.
    const usageFrom = await send(B, '/usage');
    const usage = await slack.waitFor(() => saidAfter(usageFrom).find((text) => text.startsWith('Requests:')), 10_000, 'the usage');
    expect(usage).toContain('Requests: 1');
    expect(said().filter((text) => text.startsWith('Requests:'))).toHaveLength(1);
  }, 60_000);
});
