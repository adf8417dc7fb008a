/**
 * `hob start` connects its channels before it builds the rest of hob (src/cli/start.ts): what
 * people write while it is still starting is held and answered once it is ready, exactly
 * once, on every platform; and a start-up that fails after the channels connected still ends
 * with the sentence naming the fix, its channels closed and the process gone. The first case
 * is also the one `hob start` serving Telegram, Slack and Discord at once (a start costs one
 * to two seconds of CPU: test/cli/start-channels.test.ts has the case with Discord refusing).
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { dmOf, startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

/** In Markdown: each platform shows it its own way, rendered by code a channel loads with its first message. */
const ANSWER = 'Answered **now**.';
const SHOWN = { telegram: 'Answered now.', slackNotification: 'Answered *now*.' };
const RUNNING = 'hob is running on';

let model: FakeAnthropic;
let telegram: FakeTelegram;
let slack: FakeSlack;
let discord: FakeDiscord;
const running: HobProcess[] = [];

beforeAll(async () => {
  model = await startFakeAnthropic({ apiKey: 'test-key', whenEmpty: { text: ANSWER } });
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  slack = await startFakeSlack();
  discord = await startFakeDiscord();
});

afterAll(async () => {
  for (const hob of running) hob.kill();
  await telegram.close();
  await slack.close();
  await discord.close();
  await model.close();
});

/** Person `n` is allowed on every platform (Telegram "10n", Slack "U10n", Discord "10n"). */
function start(lines: { channels?: string; more?: string; people: number[] }): HobProcess {
  const dir = tempDir('hob-start-early-');
  const ids = (prefix: string) => `[${lines.people.map((n) => `"${prefix}${100 + n}"`).join(', ')}]`;
  const config = writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
${lines.channels ?? `  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ${ids('')} }\n`}  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ${ids('U')} }
  discord: { token: "${discord.token}", api_url: ${discord.apiRoot}, allow_from: ${ids('')} }
${lines.more ?? ''}`,
  );
  const hob = spawnHob(['--config', config, 'start'], cleanEnv());
  running.push(hob);
  return hob;
}

describe('hob start connects its channels first', () => {
  it('serves Telegram, Slack and Discord at once, answers a message written on each while it is still starting exactly once, and SIGTERM closes them', async () => {
    const person = { telegram: { id: 101, first_name: 'Ann' }, slack: slack.person({ id: 'U101', name: 'Ann' }), discord: { id: '101', name: 'ann' } };
    const sentWhileStarting: string[] = [];
    let hob: HobProcess | undefined;
    const starting = () => hob !== undefined && !hob.output().includes(RUNNING);
    // Each message is written the moment its channel is connected: Telegram's first poll,
    // Slack's socket, Discord's IDENTIFY.
    let polled = false;
    telegram.onCall = (call) => {
      if (polled || call.method !== 'getUpdates') return;
      polled = true;
      if (starting()) sentWhileStarting.push('telegram');
      telegram.sendText(person.telegram, { id: person.telegram.id, type: 'private' }, 'hello while you start');
    };
    const slackWritten = new Promise<void>((resolve) => {
      slack.socket.onConnection = () => {
        slack.socket.onConnection = undefined;
        if (starting()) sentWhileStarting.push('slack');
        // After the socket's hello, which the fake sends right after this call.
        setImmediate(() => void slack.dm(person.slack, 'hello while you start').then(() => resolve()));
      };
    });
    const identified = discord.gateway.identifies().length;
    hob = start({ people: [1] });
    await discord.waitFor(() => discord.gateway.identifies().length > identified, 20_000, 'the IDENTIFY');
    if (starting()) sentWhileStarting.push('discord');
    discord.dm(person.discord, 'hello while you start');
    await telegram.waitFor(() => polled, 20_000, 'the first poll');
    await slackWritten;
    telegram.onCall = undefined;

    await hob.waitFor(RUNNING, 20_000);
    expect(hob.output()).toMatch(/hob is running on .*telegram as @hob_bot/);
    expect(hob.output()).toMatch(/hob is running on .*slack as @hob/);
    expect(hob.output()).toMatch(/hob is running on .*discord as @hob/);
    expect(hob.output()).not.toContain('no Slack channel');
    expect(sentWhileStarting).toEqual(expect.arrayContaining(['telegram', 'slack', 'discord']));
    const answers = {
      telegram: () => telegram.chat(person.telegram.id).filter((message) => message.text === SHOWN.telegram),
      slack: () => slack.seen(dmOf(person.slack.id)).filter((message) => message.text === ANSWER),
      discord: () => discord.botMessages(discord.dmChannelOf(person.discord)).filter((message) => message.content === ANSWER),
    };
    await telegram.waitFor(() => answers.telegram().length > 0, 15_000, 'the Telegram answer');
    await slack.waitFor(() => answers.slack().length > 0, 15_000, 'the Slack answer');
    await discord.waitFor(() => answers.discord().length > 0, 15_000, 'the Discord answer');
    // The first answers, written while hob started, come rendered: Telegram's HTML (bold),
    // Slack's notification text in mrkdwn beside its markdown block.
    expect(answers.telegram()[0]?.entities).toEqual([{ type: 'bold', offset: 9, length: 3 }]);
    expect(slack.web.callsOf('chat.postMessage').find((call) => call.params['channel'] === dmOf(person.slack.id))?.params['text']).toBe(SHOWN.slackNotification);
    // A second message in each chat: once it is answered, a second answer to the first would have come before it.
    telegram.sendText(person.telegram, { id: person.telegram.id, type: 'private' }, 'and now?');
    await slack.dm(person.slack, 'and now?');
    discord.dm(person.discord, 'and now?');
    await telegram.waitFor(() => answers.telegram().length >= 2, 15_000, 'the second Telegram answer');
    await slack.waitFor(() => answers.slack().length >= 2, 15_000, 'the second Slack answer');
    await discord.waitFor(() => answers.discord().length >= 2, 15_000, 'the second Discord answer');
    expect([answers.telegram().length, answers.slack().length, answers.discord().length]).toEqual([2, 2, 2]);
    hob.child.kill('SIGTERM');
    expect(await hob.exited).toBe(0);
    await slack.waitFor(() => slack.socket.open().length === 0, 5_000, 'the Slack socket closed');
    // Three fakes, six answers and a stop: longer than the default on a loaded machine.
  }, 60_000);

  it('closes the connected channels and names the fix when start-up fails after they connected (health port taken)', async () => {
    const taken = await occupiedPort();
    try {
      const port = (taken.address() as { port: number }).port;
      const identified = discord.gateway.identifies().length;
      const hob = start({ people: [2], more: `health: { port: ${port}, host: 127.0.0.1 }\n` });
      expect(await hob.exited).toBe(1);
      expect(hob.output()).toContain(`health.port ${port} on 127.0.0.1 is taken`);
      expect(hob.output()).not.toContain(RUNNING);
      // The channels had connected, and are closed again: nothing keeps receiving for a hob that is gone.
      expect(discord.gateway.identifies().length).toBeGreaterThan(identified);
      await slack.waitFor(() => slack.socket.open().length === 0, 5_000, 'the Slack socket closed');
      await discord.waitFor(() => !discord.gateway.live, 5_000, 'the Discord gateway closed');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    // A whole start-up before it fails: longer than the default on a loaded machine.
  }, 40_000);

  it('closes the connected channels and names the fix when the store cannot be reached', async () => {
    // Slack and Discord only: Telegram's single-consumer claim would ask the database before any channel connects.
    const identified = discord.gateway.identifies().length;
    const hob = start({ people: [3], channels: '', more: 'store: { kind: postgres, url: "postgres://hob@127.0.0.1:1/hob" }\n' });
    expect(await hob.exited).toBe(1);
    expect(hob.output()).toContain('PostgreSQL at 127.0.0.1:1 refused the connection; check store.url');
    expect(hob.output()).not.toContain(RUNNING);
    expect(discord.gateway.identifies().length).toBeGreaterThan(identified);
    await slack.waitFor(() => slack.socket.open().length === 0, 5_000, 'the Slack socket closed');
    await discord.waitFor(() => !discord.gateway.live, 5_000, 'the Discord gateway closed');
  }, 40_000);
});

function occupiedPort(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
