import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { APP_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';

let fake: FakeDiscord | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const configFor = (discord: FakeDiscord, token = discord.token) =>
  parseHobConfig(`channels:\n  discord: { token: "${token}", api_url: ${discord.apiRoot}, allow_from: ["1"] }\n`, { env: {} });

describe('hob doctor: Discord', () => {
  it('names the bot the token belongs to and confirms the Message Content intent, without printing the token', async () => {
    fake = await startFakeDiscord();
    const checks = await runDoctor(configFor(fake), undefined);
    expect(checks.find((check) => check.name === 'discord')).toMatchObject({ ok: true, detail: expect.stringContaining('is hob') });
    expect(checks.find((check) => check.name === 'discord intents')).toMatchObject({ ok: true });
    expect(checks.find((check) => check.name === 'discord invite')?.detail).toBe(
      `https://discord.com/oauth2/authorize?client_id=${APP_ID}&scope=bot+applications.commands&permissions=274878008320`,
    );
    expect(JSON.stringify(checks)).not.toContain(fake.token);
  });

  it('says how to switch the Message Content intent on when the application lacks it', async () => {
    fake = await startFakeDiscord({ applicationFlags: 0 });
    const checks = await runDoctor(configFor(fake), undefined);
    expect(checks.find((check) => check.name === 'discord intents')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('enable Message Content Intent in the Developer Portal'),
    });
  });

  it('says where to get a new token when Discord refuses it', async () => {
    fake = await startFakeDiscord();
    const checks = await runDoctor(configFor(fake, 'not.the.token'), undefined);
    expect(checks.find((check) => check.name === 'discord')).toMatchObject({ ok: false, detail: expect.stringContaining('channels.discord.token') });
  });

  it('says which shards this process runs, and how many to run when Discord recommends more', async () => {
    fake = await startFakeDiscord({ recommendedShards: 3 });
    const config = (shards: string) =>
      parseHobConfig(`channels:\n  discord: { token: "${fake?.token}", api_url: ${fake?.apiRoot}, allow_from: ["1"], shards: ${shards} }\n`, { env: {} });
    expect((await runDoctor(config('{ ids: [0, 2], count: 4 }'), undefined)).find((check) => check.name === 'discord shards')).toEqual({
      name: 'discord shards', ok: true, detail: 'this process runs shards 0, 2 of 4; the other processes must run the rest, each once (Discord recommends 3)',
    });
    expect((await runDoctor(config('{ ids: [1], count: 2 }'), undefined)).find((check) => check.name === 'discord shards')).toMatchObject({
      ok: false, detail: expect.stringContaining('Discord recommends 3 shards for this bot: set channels.discord.shards.count to 3 in every process'),
    });
    expect(() => config('{ ids: [2], count: 2 }')).toThrow(/channels\.discord\.shards\.ids.*expected shard ids below count \(2\); 2 is not/);
  });
});
