import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeStartConfig, type HobProcess } from '../support/hob-process.js';

const ANN = { id: '100', name: 'Ann' };

let model: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
let discord: FakeDiscord | undefined;
let slack: FakeSlack | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await telegram?.close();
  await discord?.close();
  await slack?.close();
  await model?.close();
  slack = undefined;
});

/** `hob start` on the fake Telegram and Discord, and on the fake Slack too when asked (one hob, every channel at once). */
async function startHob(options: { prepare?: (fake: FakeDiscord) => void; slack?: boolean } = {}): Promise<HobProcess> {
  model = await startFakeAnthropic();
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  discord = await startFakeDiscord();
  options.prepare?.(discord);
  if (options.slack) slack = await startFakeSlack();
  const dir = tempDir('hob-channels-');
  const slackLine = slack ? `  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["UANN"] }\n` : '';
  const path = writeStartConfig(dir, { model, telegram }, `  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: ["100"] }
${slackLine}`);
  const hob = spawnHob(['--config', path, 'start'], cleanEnv());
  running.push(hob);
  return hob;
}

describe('hob start with several channels', () => {
  // One hob serves the three platforms (one start instead of one per pair with Telegram); three
  // fakes and three answers take longer than the default 20 s on a loaded machine.
  it('serves Telegram, Discord and Slack at once, and SIGTERM closes the Slack socket', async () => {
    const hob = await startHob({ slack: true });
    await hob.waitFor(/hob is running on .*telegram as @hob_bot/, 20_000);
    expect(hob.output()).toMatch(/hob is running on .*slack as @hob/);
    expect(hob.output()).toMatch(/hob is running on .*discord as @hob/);
    expect(hob.output()).not.toContain('no Slack channel');
    model?.push({ text: 'Hello on Discord.' });
    discord?.dm(ANN, 'hi');
    await discord?.waitFor(() => discord?.botMessages(discord.dmChannelOf(ANN)).some((message) => message.content === 'Hello on Discord.'), 15_000, 'the Discord answer');
    model?.push({ text: 'Hello on Slack.' });
    const ann = slack?.person({ id: 'UANN', name: 'Ann' });
    if (!slack || !ann) throw new Error('the fake Slack did not start');
    await slack.dm(ann, 'hi from slack');
    await slack.waitFor(() => slack?.seen(dmOf(ann.id)).find((message) => message.text === 'Hello on Slack.'), 15_000, 'the Slack answer');
    model?.push({ text: 'Hello on Telegram.' });
    telegram?.sendText({ id: 100, first_name: 'Ann' }, { id: 100, type: 'private' }, 'hi');
    await telegram?.waitFor(() => telegram?.chat(100).find((message) => message.text === 'Hello on Telegram.'), 15_000, 'the Telegram answer');
    hob.child.kill('SIGTERM');
    expect(await hob.exited).toBe(0);
    await slack.waitFor(() => slack?.socket.open().length === 0, 5_000, 'the socket closed');
  }, 60_000);

  it('keeps Telegram running when Discord refuses the intents, and says how to fix it', async () => {
    const hob = await startHob({ prepare: (fake) => (fake.gateway.closeIdentifyWith = 4014) });
    await hob.waitFor('enable Message Content Intent in the Developer Portal', 15_000);
    await hob.waitFor('hob is running on', 15_000);
    model?.push({ text: 'Telegram still answers.' });
    telegram?.sendText({ id: 100, first_name: 'Ann' }, { id: 100, type: 'private' }, 'hi');
    await telegram?.waitFor(() => telegram?.chat(100).find((message) => message.text === 'Telegram still answers.'), 15_000, 'the Telegram answer');
    expect(hob.output().match(/enable Message Content Intent/g)).toHaveLength(1);
  });
});
