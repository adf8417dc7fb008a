import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeStartConfig, type HobProcess } from '../support/hob-process.js';

let model: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
let discord: FakeDiscord | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await telegram?.close();
  await discord?.close();
  await model?.close();
});

/** `hob start` on the fake Telegram and Discord. */
async function startHob(prepare: (fake: FakeDiscord) => void): Promise<HobProcess> {
  model = await startFakeAnthropic();
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  discord = await startFakeDiscord();
  prepare(discord);
  const dir = tempDir('hob-channels-');
  const path = writeStartConfig(dir, { model, telegram }, `  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: ["100"] }\n`);
  const hob = spawnHob(['--config', path, 'start'], cleanEnv());
  running.push(hob);
  return hob;
}

// One hob serving Telegram, Slack and Discord at once, each answering, and SIGTERM closing
// them: test/cli/start-early.test.ts (its first case; one start fewer).
describe('hob start with several channels', () => {
  it('keeps Telegram running when Discord refuses the intents, and says how to fix it', async () => {
    const hob = await startHob((fake) => (fake.gateway.closeIdentifyWith = 4014));
    await hob.waitFor('enable Message Content Intent in the Developer Portal', 15_000);
    await hob.waitFor('hob is running on', 15_000);
    model?.push({ text: 'Telegram still answers.' });
    telegram?.sendText({ id: 100, first_name: 'Ann' }, { id: 100, type: 'private' }, 'hi');
    await telegram?.waitFor(() => telegram?.chat(100).find((message) => message.text === 'Telegram still answers.'), 15_000, 'the Telegram answer');
    expect(hob.output().match(/enable Message Content Intent/g)).toHaveLength(1);
  });
});
