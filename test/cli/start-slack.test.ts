import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeStartConfig, type HobProcess } from '../support/hob-process.js';

let model: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
let slack: FakeSlack | undefined;
let hob: HobProcess | undefined;

afterEach(async () => {
  hob?.kill();
  await telegram?.close();
  await slack?.close();
  await model?.close();
});

describe('hob start with Telegram and Slack', () => {
  it('serves both at once, and SIGTERM closes the Slack socket', async () => {
    model = await startFakeAnthropic();
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    slack = await startFakeSlack();
    const ann = slack.person({ id: 'UANN', name: 'Ann' });
    const dir = tempDir('hob-start-slack-');
    const config = writeStartConfig(dir, { model, telegram }, `  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["${ann.id}"] }
`);
    hob = spawnHob(['--config', config, 'start'], cleanEnv());
    await hob.waitFor('hob is running on telegram as @hob_bot, slack as @hob', 20_000);
    expect(hob.output()).not.toContain('no Slack channel');
    model.push({ text: 'Hello on Slack.' });
    await slack.dm(ann, 'hi from slack');
    await slack.waitFor(() => slack?.seen(dmOf(ann.id)).find((message) => message.text === 'Hello on Slack.'), 10_000, 'the Slack answer');
    model.push({ text: 'Hello on Telegram.' });
    telegram.sendText({ id: 100, first_name: 'Ann' }, { id: 100, type: 'private' }, 'hi from telegram');
    await telegram.waitFor(() => telegram?.chat(100).find((message) => message.text === 'Hello on Telegram.'), 10_000, 'the Telegram answer');
    hob.child.kill('SIGTERM');
    expect(await hob.exited).toBe(0);
    await slack.waitFor(() => slack?.socket.open().length === 0, 5_000, 'the socket closed');
  });
});
