import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordAdapter } from '../../adapters/discord/discord-adapter.js';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { createApp, type App } from '../../src/app.js';
import { createGateway } from '../../src/cli/start-serve.js';
import { loadHobConfig, parseHobConfig } from '../../src/app/channels.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { drainer } from '../../src/scheduler/index.js';
import type { Scheduler } from '../../src/scheduler/runner.js';
import { GENERAL_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord/index.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { sqliteDb } from '../support/sqlite-store.js';
import { tempDir } from '../support/engine.js';
import { recordingLogger, slackAdapter } from '../support/slack-testbed.js';
import { PassThrough } from 'node:stream';
import { runChat } from '../../src/cli/chat.js';
import { runJobs } from '../../src/cli/jobs.js';
import { consoleUserId } from '../../src/cli/console-identity.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { engineDeps } from '../support/deps.js';
import { createScheduling } from '../../src/scheduler/index.js';
import { jobsMessage } from '../../src/gateway/commands/jobs.js';
import { makeContext } from '../tools/tool-harness.js';
import { testMemory } from '../memory/fixture.js';
import { jobIdIn, SETTINGS, silent } from './harness.js';

let telegram: FakeTelegram | undefined;
let slack: FakeSlack | undefined;
let discord: FakeDiscord | undefined;
let app: App | undefined;
let gateway: Gateway | undefined;
let scheduler: Scheduler | undefined;

afterEach(async () => {
  await scheduler?.stop();
  await gateway?.stop();
  await app?.close();
  await telegram?.close();
  await slack?.close();
  await discord?.close();
  scheduler = gateway = app = telegram = slack = discord = undefined;
});

/** `hob start` in this process: the app and gateway it builds, on Telegram, Slack and Discord fakes. Nobody here owns hob. */
async function startHob(model: ScriptedModel): Promise<{ app: App; telegram: FakeTelegram; slack: FakeSlack; discord: FakeDiscord }> {
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  slack = await startFakeSlack();
  discord = await startFakeDiscord();
  const dir = tempDir('hob-linked-jobs-');
  const { config } = loadHobConfig({
    text: `data_dir: ${dir}/data
timezone: Europe/Berlin
model: { provider: anthropic, name: claude-test, api_key: test-key }
tools: { workspace: ${dir}/work }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ["1", "100"] }
  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appToken}, api_url: "${slack.apiUrl}", allow_from: ["UOWN", "UANN", "UBOB"], allowed_channels: ["C1"] }
  discord: { token: "${discord.token}", api_url: "${discord.apiRoot}", allow_from: ["1", "300"] }
`,
    env: { HOME: dir },
  });
  app = await createApp({ config, channel: 'a terminal', provider: model, logDestination: 'silent' });
  const adapters = [
    createTelegramAdapter({ token: telegram.token, apiRoot: telegram.apiRoot, logger: recordingLogger() }),
    slackAdapter(slack),
    createDiscordAdapter({ token: discord.token, apiUrl: discord.apiRoot, logger: recordingLogger(), onFatal: () => undefined, commandSilenceMs: 60_000 }),
  ];
  gateway = createGateway(app, adapters);
  await gateway.start();
  const started = gateway;
  app.scheduling.setOwnerCheck((platform, userId) => started.access.isOwner(platform, userId));
  scheduler = app.scheduling.startRunner({ kick: drainer(gateway.delivery, app.store.outbox), engine: (key) => (app as App).engine(key), logger: silent, intervalMs: 50 });
  return { app, telegram, slack, discord };
}

const ANN_TG = { id: 100, first_name: 'Ann' };
const ANN_DM = { id: 100, type: 'private' as const };
const ANN_SLACK = { id: 'UANN', name: 'Ann' };
const BOB_SLACK = { id: 'UBOB', name: 'Bob' };
const ANN_DISCORD = { id: '300', name: 'Ann' };

describe('jobs of a linked person on Telegram, Slack and Discord', () => {
  it('a job made on Telegram in the profile timezone is listed, paused and resumed from the linked Slack and Discord; nobody else sees it; reminders reach a Slack thread and a Discord channel', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'schedule_create', input: { kind: 'reminder', text: 'call the dentist', cron: '0 9 * * *' } }] },
      { text: 'Every day at 9 I will remind you.' },
      { toolCalls: [{ name: 'schedule_create', input: { kind: 'reminder', text: 'stand-up notes', in: '20m' } }] },
      { text: 'In 20 minutes, here.' },
    ]);
    const hob = await startHob(model);
    const tgSaid = (pattern: RegExp, what: string) => hob.telegram.waitFor(() => hob.telegram.chat(100).find((m) => pattern.test(m.text)), 10_000, what);

    // Telegram: the timezone in the profile, then a reminder in plain words.
    hob.telegram.sendText(ANN_TG, ANN_DM, '/settings timezone America/New_York');
    await tgSaid(/America\/New_York/, 'the settings answer');
    hob.telegram.sendText(ANN_TG, ANN_DM, 'remind me every day at 9 to call the dentist');
    await tgSaid(/^Every day at 9/, 'the confirmation');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toMatch(/Created reminder j[0-9a-f]{8}: cron \\"0 9 \* \* \*\\" \(America\/New_York\)[^]*Next runs \(America\/New_York\)/);
    const [job] = hob.app.scheduling.jobs.list();
    if (!job) throw new Error('no job');
    expect(job).toMatchObject({ ownerId: 'telegram:100', timezone: 'America/New_York', target: { platform: 'telegram', chatId: '100' } });

    // Slack: linked with a code from Telegram through `/hob link CODE`, then `/hob jobs`.
    hob.telegram.sendText(ANN_TG, ANN_DM, '/link');
    const code = /\b(\d{6})\b/.exec((await tgSaid(/\b\d{6}\b/, 'the link code')).text)?.[1] as string;
    await hob.slack.slash(ANN_SLACK, dmOf(ANN_SLACK.id), `link ${code}`);
    await hob.slack.waitFor(() => hob.slack.ephemeralsFor(ANN_SLACK).find((text) => text.startsWith('Linked')), 10_000, 'linked on Slack');
    await hob.slack.slash(ANN_SLACK, dmOf(ANN_SLACK.id), 'jobs');
    const slackList = await hob.slack.waitFor(() => hob.slack.seen(dmOf(ANN_SLACK.id)).find((m) => m.text.includes('Your reminders and reports')), 10_000, 'the Slack list');
    expect(slackList.text).toContain('(times in America/New_York)');
    expect(slackList.text).toContain(`${job.id} · reminder · cron "0 9 * * *" (America/New_York) · next `);
    expect(slackList.text).toContain('"call the dentist"');
    await hob.slack.press(ANN_SLACK, dmOf(ANN_SLACK.id), slackList.id, `Pause ${job.id}`);
    await hob.slack.waitFor(() => hob.app.scheduling.jobs.get(job.id)?.enabled === false, 10_000, 'paused from Slack');

    // Bob on Slack sees none of it, and cannot press Ann's buttons.
    await hob.slack.slash(BOB_SLACK, dmOf(BOB_SLACK.id), 'jobs');
    const bobList = await hob.slack.waitFor(() => hob.slack.seen(dmOf(BOB_SLACK.id)).find((m) => m.text.includes('No reminders or reports')), 10_000, "Bob's list");
    expect(bobList.text).not.toContain(job.id);

    // Discord: linked too, then the `jobs` application command and its Resume button.
    hob.telegram.sendText(ANN_TG, ANN_DM, '/link');
    await hob.telegram.waitFor(() => hob.telegram.chat(100).filter((m) => /\b\d{6}\b/.test(m.text)).length === 2, 10_000, 'a second code');
    const second = /\b(\d{6})\b/.exec(hob.telegram.chat(100).filter((m) => /\b\d{6}\b/.test(m.text))[1]?.text ?? '')?.[1] as string;
    const annDm = hob.discord.dmChannelOf(ANN_DISCORD);
    hob.discord.dm(ANN_DISCORD, `/link ${second}`);
    await hob.discord.waitFor(() => hob.discord.botMessages(annDm).find((m) => m.content.startsWith('Linked')), 10_000, 'linked on Discord');
    hob.discord.slash(ANN_DISCORD, annDm, 'jobs');
    const discordList = await hob.discord.waitFor(() => hob.discord.botMessages(annDm).find((m) => m.content.includes('Your reminders and reports')), 10_000, 'the Discord list');
    // Plain text on Discord has its Markdown characters escaped, so they show as typed.
    expect(discordList.content.replace(/\\/g, '')).toContain(`${job.id} · reminder · cron "0 9 * * *" (America/New_York) · paused`);
    const resume = discordList.buttons.flat().find((button) => button.label === `Resume ${job.id}`);
    expect(resume).toBeDefined();
    hob.discord.press(ANN_DISCORD, discordList.id, resume?.customId as string);
    await hob.discord.waitFor(() => hob.app.scheduling.jobs.get(job.id)?.enabled === true, 10_000, 'resumed from Discord');

    // A reminder made in a Slack thread arrives in that thread, through the outbox.
    const threadTs = await hob.slack.mention(ANN_SLACK, 'C1', 'in 20 minutes remind me of the stand-up notes');
    await hob.slack.waitFor(() => hob.slack.seen('C1').find((m) => m.text === 'In 20 minutes, here.'), 10_000, 'the thread confirmation');
    const threaded = hob.app.scheduling.jobs.get(jobIdIn(JSON.stringify(model.requests[3]?.messages.at(-1))));
    if (!threaded) throw new Error('no threaded job');
    expect(threaded).toMatchObject({ ownerId: 'telegram:100', target: { platform: 'slack', chatId: 'C1', threadId: threadTs } });
    hob.app.scheduling.jobs.save({ ...threaded, nextRunAt: Date.now() }, Date.now());
    const arrived = await hob.slack.waitFor(() => hob.slack.seen('C1').find((m) => m.text.includes('stand-up notes') && m.text.startsWith('⏰')), 10_000, 'the reminder in the thread');
    expect(arrived.threadTs).toBe(threadTs);

    // And one whose target is a Discord channel.
    const now = Date.now();
    hob.app.scheduling.jobs.create({ ...threaded, id: 'j0000beef', text: 'water the plants', target: { platform: 'discord', chatId: GENERAL_ID }, schedule: { kind: 'at', at: now }, nextRunAt: now, createdAt: now });
    await hob.discord.waitFor(() => hob.discord.botMessages(GENERAL_ID).find((m) => m.content === '⏰ water the plants'), 10_000, 'the reminder on Discord');
  });
});

describe('linking and jobs', () => {
  it("a job made on Slack before linking stays its owner's after the link: /jobs on Telegram lists it, and another person's /jobs does not", async () => {
    const { memory, db, store } = testMemory();
    const scheduling = createScheduling({ store, clock: { now: () => Date.now() }, defaultTimezone: 'UTC', settings: SETTINGS, people: memory.people, timezoneFor: (person) => memory.timezoneFor(person) });
    const create = scheduling.tools.find((tool) => tool.name === 'schedule_create');
    const made = await create?.run({ kind: 'reminder', text: 'renew the domain', in: '2h' }, { ...makeContext('/tmp'), sessionKey: 'slack:D1', userId: 'UANN' });
    const id = jobIdIn(typeof made === 'string' ? made : (made?.content ?? ''));
    expect(memory.people.redeem(memory.people.createLinkCode('telegram:100'), 'slack', 'UANN')).toMatchObject({ ok: true });
    expect(jobsMessage(scheduling.access, 'telegram', '100', undefined, false).text).toContain(id);
    expect(jobsMessage(scheduling.access, 'slack', 'UANN', undefined, false).text).toContain(id);
    expect(jobsMessage(scheduling.access, 'slack', 'UBOB', undefined, false).text).not.toContain(id);
    memory.close();
    db.close();
  });
});

describe('/jobs in the terminal', () => {
  it('lists the linked person\'s jobs in their profile timezone, and pauses, resumes and deletes them by id, without asking the model', async () => {
    const { memory, db, store } = testMemory();
    const scheduling = createScheduling({ store, clock: { now: () => Date.now() }, defaultTimezone: 'UTC', settings: SETTINGS, people: memory.people, timezoneFor: (person) => memory.timezoneFor(person) });
    memory.profiles.set('telegram:100', 'timezone', 'Asia/Tokyo');
    const create = scheduling.tools.find((tool) => tool.name === 'schedule_create');
    const made = await create?.run({ kind: 'report', text: 'summarize my inbox', cron: '30 7 * * 1-5' }, { ...makeContext('/tmp'), sessionKey: 'telegram:100', userId: '100' });
    const id = jobIdIn(typeof made === 'string' ? made : (made?.content ?? ''));
    expect(memory.people.redeem(memory.people.createLinkCode('telegram:100'), 'console', 'ann')).toMatchObject({ ok: true });

    const model = new ScriptedModel([]);
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const chat = runChat({ engine: new QueryEngine('console:ann', engineDeps(model)), userId: 'ann', logger: silent, approvalTimeoutSeconds: 30, jobs: scheduling.access, input, output, interactive: false });
    input.end(`/jobs\n/jobs pause ${id}\n/jobs resume ${id}\n/jobs delete ${id}\n/jobs\n/jobs stop it\n`);
    await chat;
    expect(shown).toContain(`Your reminders and reports (times in Asia/Tokyo):\n${id} · report · cron "30 7 * * 1-5" (Asia/Tokyo) · next `);
    expect(shown).toContain(`Paused ${id}. It will not run until resumed.`);
    expect(shown).toMatch(new RegExp(`Resumed ${id}\\. Next runs \\(Asia/Tokyo\\): \\w{3} \\d+ \\w{3} \\d{4} 07:30`));
    expect(shown).toContain(`Deleted report ${id} ("summarize my inbox").`);
    expect(shown).toContain('No reminders or reports.');
    expect(shown).toContain('Usage: /jobs (list), /jobs pause ID, /jobs resume ID, /jobs delete ID.');
    expect(model.requests).toHaveLength(0);
    memory.close();
    db.close();
  });
});

describe('hob jobs', () => {
  it("shows times in the timezone of the terminal's linked person", async () => {
    const dir = tempDir('hob-cli-jobs-tz-');
    const { config } = loadHobConfig({ text: `data_dir: ${dir}\ntimezone: Europe/Berlin\n`, env: { HOME: dir } });
    const { memory, db, store } = testMemory({ dir });
    memory.profiles.set('telegram:100', 'timezone', 'Asia/Tokyo');
    expect(memory.people.redeem(memory.people.createLinkCode('telegram:100'), 'console', consoleUserId())).toMatchObject({ ok: true });
    const scheduling = createScheduling({ store, clock: { now: () => Date.now() }, defaultTimezone: 'Europe/Berlin', settings: SETTINGS, people: memory.people, timezoneFor: (person) => memory.timezoneFor(person) });
    await scheduling.tools.find((tool) => tool.name === 'schedule_create')?.run({ kind: 'reminder', text: 'stretch', cron: '0 9 * * *', timezone: 'UTC' }, { ...makeContext('/tmp'), sessionKey: 'telegram:100', userId: '100' });
    memory.close();
    db.close();
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    expect(runJobs(config, 'list', undefined, out)).toBe(0);
    // 09:00 UTC is 18:00 in Tokyo.
    expect(text).toMatch(/^Times in Asia\/Tokyo:\nj[0-9a-f]{8} · reminder · cron "0 9 \* \* \*" \(UTC\) · next \w{3} \d+ \w{3} \d{4} 18:00\n/);
  });
});

describe('a scheduled report acts for the job owner', () => {
  it("has the owner's name, timezone and memory in its prompt, and its memory tools act on the owner's memory", async () => {
    const { reportRunner } = await import('../../src/scheduler/report.js');
    const { parseConfig } = await import('../../src/config/load.js');
    const dir = tempDir('hob-report-person-');
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'memory_search', input: { query: 'padel' } }] },
      { text: 'Padel tonight at 19:00.' },
    ]);
    const config = parseHobConfig(`data_dir: ${dir}\ntimezone: UTC\nmodel: { api_key: test }\n`, { env: {} });
    const reportApp = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent', clock: { now: () => Date.UTC(2026, 11, 1, 9, 5) } });
    app = reportApp;
    reportApp.memory.profiles.set('telegram:100', 'name', 'Annie');
    reportApp.memory.profiles.set('telegram:100', 'timezone', 'Asia/Tokyo');
    reportApp.memory.save('telegram:100', { content: 'Padel with Jonas every Tuesday at 19:00, court 3', source: 'tool' });
    const create = reportApp.scheduling.tools.find((tool) => tool.name === 'schedule_create');
    const made = await create?.run({ kind: 'report', text: 'what sport do I play today?', cron: '0 8 * * *' }, { ...makeContext(dir), sessionKey: 'telegram:100', userId: '100' });
    const job = reportApp.scheduling.jobs.get(jobIdIn(typeof made === 'string' ? made : (made?.content ?? '')));
    if (!job) throw new Error('no job');

    const outcome = await reportRunner((key) => reportApp.engine(key))(job, new AbortController().signal);
    expect(outcome).toEqual({ ok: true, text: 'Padel tonight at 19:00.' });
    const system = model.requests[0]?.system ?? '';
    expect(system).toContain('Call the person Annie.');
    expect(system).toContain('Their timezone is Asia/Tokyo');
    expect(system).toContain('Padel with Jonas');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('Padel with Jonas every Tuesday');
    // schedule_list in the report lists the owner's jobs.
    const list = reportApp.scheduling.tools.find((tool) => tool.name === 'schedule_list');
    expect(await list?.run({}, { ...makeContext(dir), sessionKey: `job:${job.id}`, userId: '100' })).toContain(job.id);
    // Nothing was saved for a person named after the job session.
    expect(sqliteDb(reportApp.store).prepare("SELECT COUNT(*) AS n FROM memory_entries WHERE person_id LIKE 'job:%'").get()).toEqual({ n: 0 });
  });
});
