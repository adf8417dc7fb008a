import '../support/env.js';
import { REST, Routes } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { GENERAL_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { discordBed, type DiscordBed } from '../support/discord-testbed.js';

let fake: FakeDiscord | undefined;
let bed: DiscordBed | undefined;

afterEach(async () => {
  await bed?.close();
  await fake?.close();
  bed = undefined;
  fake = undefined;
});

/** The fake itself: it must refuse what Discord refuses, or the adapter tests prove nothing. */
describe('the fake Discord', () => {
  it('answers heartbeats with ACKs on the gateway', async () => {
    bed = await discordBed({ heartbeatIntervalMs: 30 });
    await bed.adapter.start({ message: () => undefined, button: () => undefined });
    await bed.fake.waitFor(() => bed?.fake.gateway.frames.filter((frame) => frame.op === 1).length === 3, 5000, 'three heartbeats');
    // A heartbeat without its ACK makes discord.js drop the connection and resume.
    expect(bed.fake.gateway.resumes()).toEqual([]);
    expect(bed.fake.gateway.identifies()).toHaveLength(1);
    expect(bed.fake.gateway.live).toBe(true);
  });

  it('refuses a wrong bot token, an over-long message and an empty one, as Discord does', async () => {
    fake = await startFakeDiscord();
    const wrong = new REST({ api: fake.apiRoot, retries: 0 }).setToken('not-the-token');
    await expect(wrong.get(Routes.user('@me'))).rejects.toMatchObject({ status: 401 });
    const rest = new REST({ api: fake.apiRoot, retries: 0 }).setToken(fake.token);
    await expect(rest.post(Routes.channelMessages(GENERAL_ID), { body: { content: 'x'.repeat(2001) } })).rejects.toMatchObject({ status: 400, code: 50035 });
    await expect(rest.post(Routes.channelMessages(GENERAL_ID), { body: { content: '' } })).rejects.toMatchObject({ status: 400, code: 50006 });
    await rest.post(Routes.channelTyping(GENERAL_ID)); // a 204 without a JSON content type
    expect(fake.botMessages(GENERAL_ID)).toEqual([]);
  });

  it('counts pings the way Discord does when allowed_mentions is left out', async () => {
    fake = await startFakeDiscord();
    const rest = new REST({ api: fake.apiRoot, retries: 0 }).setToken(fake.token);
    await rest.post(Routes.channelMessages(GENERAL_ID), { body: { content: '@everyone hi <@200>' } });
    expect(fake.botMessages(GENERAL_ID)[0]?.pinged).toEqual(['@everyone', 'user:200']);
  });
});
