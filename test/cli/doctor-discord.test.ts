import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseHobConfig } from '../../src/cli/channels.js';
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
});
