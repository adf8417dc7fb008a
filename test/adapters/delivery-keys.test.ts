import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/slack-adapter.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';
import { slackAdapter } from '../support/slack-testbed.js';
import { OWNER } from '../support/gateway.js';

/**
 * What lets hob send a message a second time without it arriving twice: Discord's nonce with
 * `enforce_nonce`, Slack's message metadata, and the look-up of both after a crash.
 */

let discord: FakeDiscord | undefined;
let bed: DiscordBed | undefined;
let slack: FakeSlack | undefined;
let adapter: SlackAdapter | undefined;

afterEach(async () => {
  await bed?.close();
  await discord?.close();
  await adapter?.stop();
  await slack?.close();
  bed = undefined;
  discord = undefined;
  adapter = undefined;
  slack = undefined;
});

const MINUTES = 60_000;

describe('the fake Discord keeps nonces and buckets as Discord does', () => {
  const post = (fake: FakeDiscord, channel: string, body: Record<string, unknown>) =>
    fetch(`${fake.apiRoot}/v10/channels/${channel}/messages`, { method: 'POST', headers: { authorization: `Bot ${fake.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('a repeated nonce with enforce_nonce returns the existing message within a few minutes, and is never shown when messages are read back', async () => {
    discord = await startFakeDiscord();
    const channel = discord.dmChannelOf(OWNER);
    const first = (await (await post(discord, channel, { content: 'once', nonce: 'k1.0', enforce_nonce: true })).json()) as { id: string; nonce?: string };
    const again = (await (await post(discord, channel, { content: 'once', nonce: 'k1.0', enforce_nonce: true })).json()) as { id: string };
    expect(again.id).toBe(first.id);
    expect(first.nonce).toBe('k1.0');
    expect(discord.botMessages(channel)).toHaveLength(1);
    // Without enforce_nonce the nonce only travels along; past the window it is forgotten.
    await post(discord, channel, { content: 'twice', nonce: 'k2.0' });
    await post(discord, channel, { content: 'twice', nonce: 'k2.0' });
    discord.clockOffsetMs += 5 * MINUTES;
    await post(discord, channel, { content: 'once', nonce: 'k1.0', enforce_nonce: true });
    expect(discord.botMessages(channel).map((message) => message.content)).toEqual(['once', 'twice', 'twice', 'once']);
    const read = (await (await fetch(`${discord.apiRoot}/v10/channels/${channel}/messages?limit=10`, { headers: { authorization: `Bot ${discord.token}` } })).json()) as Record<string, unknown>[];
    expect(read).toHaveLength(4);
    expect(read.every((message) => !('nonce' in message))).toBe(true);
    expect((await post(discord, channel, { content: 'x', nonce: 'n'.repeat(26), enforce_nonce: true })).status).toBe(400);
  });

  it('takes five messages per channel in five seconds; the sixth gets a 429 with retry_after and the bucket headers', async () => {
    discord = await startFakeDiscord();
    const channel = discord.dmChannelOf(OWNER);
    const statuses: number[] = [];
    for (let n = 0; n < 6; n++) statuses.push((await post(discord, channel, { content: `m${n}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await post(discord, channel, { content: 'm6' });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await refused.json()) as { retry_after: number }).retry_after).toBeGreaterThan(0);
    // Another channel has its own bucket.
    expect((await post(discord, discord.dmChannelOf({ id: '999', name: 'Zed' }), { content: 'elsewhere' })).status).toBe(200);
    expect(discord.botMessages(channel)).toHaveLength(5);
  });
});

describe('discord: a delivery key on every message', () => {
  it('a resend with the same key returns the message that is there; after the nonce is forgotten, the look-up finds it by what it says', async () => {
    bed = await discordBed();
    const channel = bed.fake.dmChannelOf(OWNER);
    const target = { chatId: channel };
    const first = await bed.adapter.send(target, { text: 'Your answer.' }, { deliveryKey: 'a1.x' });
    const resent = await bed.adapter.send(target, { text: 'Your answer.' }, { deliveryKey: 'a1.x' });
    expect(resent.messageId).toBe(first.messageId);
    expect(bed.fake.botMessages(channel)).toHaveLength(1);
    expect(bed.fake.restCalls('POST', /\/messages$/).map((call) => call.body)).toEqual([
      expect.objectContaining({ nonce: 'a1.x.0', enforce_nonce: true }),
      expect.objectContaining({ nonce: 'a1.x.0', enforce_nonce: true }),
    ]);

    bed.fake.clockOffsetMs += 5 * MINUTES;
    const since = Date.now() - 1000;
    const found = await bed.adapter.findDelivered?.(target, [{ key: 'a1.x', message: { text: 'Your answer.' }, partsSent: 0, since }, { key: 'b2.x', message: { text: 'Never sent.' }, partsSent: 0, since }], new Set());
    expect(found).toEqual(new Map([['a1.x', { partsSent: 1, messageId: first.messageId, complete: true }]]));
    // A message another delivery recorded is never taken for this one.
    expect((await bed.adapter.findDelivered?.(target, [{ key: 'a1.x', message: { text: 'Your answer.' }, partsSent: 0, since }], new Set([first.messageId])))?.size).toBe(0);
  });

  it('finds the parts of a split message that arrived, and says the rest did not', async () => {
    bed = await discordBed();
    const channel = bed.fake.dmChannelOf(OWNER);
    const text = Array.from({ length: 12 }, (_, n) => `Section ${n}: ${'word '.repeat(120)}`.trim()).join('\n\n');
    await bed.adapter.send({ chatId: channel }, { text }, { deliveryKey: 'c3.x' });
    const parts = bed.fake.botMessages(channel);
    expect(parts.length).toBeGreaterThan(2);
    const lastPart = parts.at(-1);
    if (lastPart) lastPart.deleted = true; // as if the send broke off before the last part
    const found = await bed.adapter.findDelivered?.({ chatId: channel }, [{ key: 'c3.x', message: { text }, partsSent: 1, since: Date.now() - 1000 }], new Set());
    expect(found?.get('c3.x')).toEqual({ partsSent: parts.length - 1, messageId: parts.at(-2)?.id, complete: false });
  });
});

describe('slack: a delivery key in every message\'s metadata', () => {
  const ann = { id: 'UANN', name: 'Ann' };

  it('a look-up finds a sent message by its metadata, at the top of a DM and in a thread, and not one that was never sent', async () => {
    slack = await startFakeSlack();
    adapter = slackAdapter(slack);
    const dm = { chatId: dmOf(ann.id) };
    const top = await adapter.send(dm, { text: 'At the top.' }, { deliveryKey: 'd4.x' });
    const threaded = await adapter.send({ ...dm, threadId: '1800000000.000001' }, { text: 'In the thread.' }, { deliveryKey: 'e5.x' });
    expect(slack.web.messages.map((message) => message.metadata)).toEqual([
      { event_type: 'hob_delivery', event_payload: { key: 'd4.x.0' } },
      { event_type: 'hob_delivery', event_payload: { key: 'e5.x.0' } },
    ]);
    const since = Date.now() - 1000;
    const atTop = await adapter.findDelivered?.(dm, [{ key: 'd4.x', message: { text: 'At the top.' }, partsSent: 0, since }, { key: 'f6.x', message: { text: 'Never sent.' }, partsSent: 0, since }], new Set());
    expect(atTop).toEqual(new Map([['d4.x', { partsSent: 1, messageId: top.messageId, complete: true }]]));
    const inThread = await adapter.findDelivered?.({ ...dm, threadId: '1800000000.000001' }, [{ key: 'e5.x', message: { text: 'In the thread.' }, partsSent: 0, since }], new Set());
    expect(inThread?.get('e5.x')?.messageId).toBe(threaded.messageId);
    // The web client sends the flag form-encoded.
    expect(slack.web.callsOf('conversations.history')[0]?.params).toMatchObject({ channel: dm.chatId, include_all_metadata: 'true' });
    expect(slack.web.callsOf('conversations.replies')[0]?.params).toMatchObject({ ts: '1800000000.000001', include_all_metadata: 'true' });
  });

  it('the fake refuses metadata Slack would refuse', async () => {
    slack = await startFakeSlack();
    const call = (metadata: unknown) =>
      fetch(`${slack?.apiUrl}chat.postMessage`, { method: 'POST', headers: { authorization: `Bearer ${slack?.botToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ channel: dmOf(ann.id), text: 'x', metadata }) }).then((response) => response.json());
    expect(await call({ event_type: 'hob delivery!', event_payload: {} })).toMatchObject({ ok: false, error: 'invalid_metadata_format' });
    expect(await call({ event_type: 'hob_delivery' })).toMatchObject({ ok: false, error: 'invalid_metadata_format' });
    expect(await call({ event_type: 'hob_delivery', event_payload: { key: 'k' } })).toMatchObject({ ok: true });
  });
});
