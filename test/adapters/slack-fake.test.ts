import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { WebClient } from '@slack/web-api';
import { BOT, startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';

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

  it('answers conversations.replies with the thread\'s messages, people\'s and the bot\'s, in pages', async () => {
    fake = await startFakeSlack();
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const parent = fake.web.nextTs();
    fake.web.recordEvent(fake.messageEvent({ id: '200', name: 'Bob' }, 'C1', 'the plan', parent));
    await client.chat.postMessage({ channel: 'C1', thread_ts: parent, text: 'Noted.' });
    fake.web.recordEvent(fake.messageEvent({ id: '100', name: 'Ann' }, 'C1', 'and then?', fake.web.nextTs(), { threadTs: parent }));
    const first = await client.conversations.replies({ channel: 'C1', ts: parent, limit: 2 });
    expect(first.messages?.map((message) => [message.text, message.user, message.bot_id])).toEqual([
      ['the plan', '200', undefined],
      ['Noted.', BOT.userId, BOT.botId],
    ]);
    expect(first.has_more).toBe(true);
    const rest = await client.conversations.replies({ channel: 'C1', ts: parent, limit: 2, cursor: first.response_metadata?.next_cursor ?? '' });
    expect(rest.messages?.map((message) => message.text)).toEqual(['and then?']);
    expect(rest.has_more).toBe(false);
    await expect(client.conversations.replies({ channel: 'C1', ts: '1.000001' })).rejects.toMatchObject({ data: { error: 'thread_not_found' } });
    fake.web.scopes = fake.web.scopes.filter((scope) => scope !== 'channels:history');
    await expect(client.conversations.replies({ channel: 'C1', ts: parent })).rejects.toMatchObject({ data: { error: 'missing_scope' } });
  });
});
