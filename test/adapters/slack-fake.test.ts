import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close().catch(() => undefined);
});

describe('the fake Slack itself', () => {
  it('fails the test when a client never acks an envelope', async () => {
    fake = await startFakeSlack();
    const client = new WebSocket(fake.socket.url);
    const hello = new Promise<string>((resolve) => client.once('message', (data) => resolve(String(data))));
    expect(JSON.parse(await hello)).toMatchObject({ type: 'hello' });
    // This client reads the envelope and never acks it.
    const delivered = new Promise<void>((resolve) => client.once('message', () => resolve()));
    void fake.socket.send('events_api', { event_id: 'Ev1' });
    await delivered;
    client.terminate();
    const closing = fake;
    fake = undefined;
    await expect(closing.close()).rejects.toThrow('envelopes never acked: env-1 (events_api)');
  });

  it('answers Web API calls with a bad token as Slack does', async () => {
    fake = await startFakeSlack();
    const response = await fetch(`${fake.apiUrl}auth.test`, { method: 'POST', headers: { authorization: 'Bearer xoxb-wrong' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: false, error: 'invalid_auth' });
  });
});
