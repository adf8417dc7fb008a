import '../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordAdapter, type DiscordAdapter } from '../../adapters/discord/discord-adapter.js';
import type { InboundMessage } from '../../src/gateway/channel.js';
import { BOT_ID, GENERAL_ID, GUILD_ID, shardOf, startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { FRIEND, OWNER } from '../support/gateway.js';

/** Two hob processes splitting the bot's two shards: each gets only its servers' events. */

let fake: FakeDiscord;
const processes: { adapter: DiscordAdapter; messages: InboundMessage[] }[] = [];
let other: { guildId: string; channelId: string };

beforeAll(async () => {
  fake = await startFakeDiscord();
  // GUILD_ID maps to shard 1 of 2; a second server on shard 0.
  other = fake.addGuild('Other Guild', [0, 2]);
  for (const id of [0, 1]) {
    const messages: InboundMessage[] = [];
    const adapter = createDiscordAdapter({ token: fake.token, apiUrl: fake.apiRoot, shards: { ids: [id], count: 2 }, logger: { info() {}, warn() {}, error() {} } });
    await adapter.start({ message: (message) => void messages.push(message), button: () => {} });
    processes.push({ adapter, messages });
  }
});

afterAll(async () => {
  for (const { adapter } of processes) await adapter.stop();
  await fake.close();
});

describe('discord shards over two processes', () => {
  it('each process identifies its own shard and receives only the events Discord routes to it; DMs go to shard 0', async () => {
    expect(shardOf(GUILD_ID, 2)).toBe(1);
    expect(fake.gateway.identifies().map((frame) => (frame.d as { shard: number[] }).shard).sort()).toEqual([[0, 2], [1, 2]]);
    expect(fake.gateway.liveShards()).toEqual([0, 1]);

    fake.say(FRIEND, GENERAL_ID, `<@${BOT_ID}> from the first server`);
    fake.say(FRIEND, other.channelId, `<@${BOT_ID}> from the other server`);
    fake.dm(OWNER, 'a direct message');
    const [zero, one] = processes as [(typeof processes)[number], (typeof processes)[number]];
    await fake.waitFor(() => zero.messages.length === 2 && one.messages.length === 1, 8000, 'three messages');
    expect(zero.messages.map((message) => [message.chatId, message.text])).toEqual([
      [other.channelId, 'from the other server'],
      [fake.dmChannelOf(OWNER), 'a direct message'],
    ]);
    expect(one.messages.map((message) => [message.chatId, message.text])).toEqual([[GENERAL_ID, 'from the first server']]);
  });
});
