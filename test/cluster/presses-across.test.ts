/**
 * issue 23: two `hob start` processes on one PostgreSQL database and one Slack app (one
 * Socket Mode connection each). A conversation runs in the process its message reached (A);
 * the buttons of its approval and its question are pressed through the other (B): B decides
 * in the database, answers the press and closes the prompt, and A's run goes on. Commands
 * for the conversation typed through B act in A, where it runs, and are answered once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { dmOf, type SlackButtonSeen } from '../fakes/slack/web-api.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';
import { postgresSkipReason } from '../support/postgres.js';
import { postgresDatabase } from '../support/postgres-fixture.js';

const A = 'a';
const B = 'b';

describe.skipIf(postgresSkipReason)('presses across two hob processes on one database', () => {
  let model: FakeAnthropic;
  let slack: FakeSlack;
  const hobs: HobProcess[] = [];
  const dirs: string[] = [];
  const ann = { id: 'UANN', name: 'Ann' };
  const bob = { id: 'UBOB', name: 'Bob' };
  const dm = dmOf(ann.id);
  const team = 'CTEAM';
  const db = postgresDatabase();

  beforeAll(async () => {
    [model, slack] = await Promise.all([startFakeAnthropic(), startFakeSlack()]);
    slack.person(ann);
    slack.person(bob);
    const { url } = db;
    // Each with its own app token, so the fake knows which process a connection is; both are up before any run waits.
    await Promise.all([A, B].map(async (label, index) => {
      const dir = tempDir(`hob-presses-${label}-`);
      dirs[index] = dir;
      const config = writeConfig(
        dir,
        `data_dir: ${dir}/data
store: { kind: postgres, url: "${url}" }
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  slack: { bot_token: ${slack.botToken}, app_token: ${slack.appTokenFor(label)}, api_url: "${slack.apiUrl}", allow_from: ["${ann.id}", "${bob.id}"], allowed_channels: ["${team}"] }
`,
      );
      const hob = spawnHob(['--config', config, 'start'], cleanEnv());
      hobs[index] = hob;
      await hob.waitFor('hob is running on slack', 30_000);
      await slack.waitFor(() => slack.socket.open().some((connection) => slack.socket.labels.get(connection) === label), 10_000, `process ${label}'s socket`);
    }));
  }, 90_000);

  afterAll(async () => {
    for (const hob of hobs) hob.kill();
    await Promise.all(hobs.map((hob) => hob.exited));
    await slack?.close();
    await model?.close();
  });

  /** Ann's DM reaches A; resolves with the bot's message that has `label` among its buttons, and that button. */
  async function askThroughA(text: string, label: string, about: string): Promise<{ ts: string; button: SlackButtonSeen }> {
    slack.socket.deliverOn = A;
    await slack.dm(ann, text);
    const prompt = await slack.waitFor(() => slack.web.messages.find((message) => message.channel === dm && message.text.includes(about) && message.buttons.some((button) => button.label === label)), 15_000, `the prompt about ${about}`);
    return { ts: prompt.ts, button: prompt.buttons.find((button) => button.label === label) as SlackButtonSeen };
  }

  /** Presses on B; resolves with the words the presser was shown. */
  async function pressOnB(who: typeof ann, ts: string, button: SlackButtonSeen): Promise<string> {
    slack.socket.deliverOn = B;
    const before = slack.ephemeralsFor(who).length;
    // As Slack sends it, also for a button already gone from the message (a second tap before the edit showed).
    await slack.pressData(who, dm, ts, button);
    return slack.waitFor(() => slack.ephemeralsFor(who)[before], 10_000, `the answer to ${who.name}'s press`);
  }

  const answers = (text: string) => slack.seen(dm).filter((message) => message.text === text);
  const workspaceOfA = () => join(dirs[0] as string, 'data', 'workspace');
  const logOf = (index: number) => readFileSync(join(dirs[index] as string, 'data', 'logs', 'hob.log'), 'utf8');

  it('approve on B: another person is refused, then the tool runs once in A and the answer arrives once', async () => {
    model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> approve-marker.txt' } }] }, { text: 'The marker is written.' });
    const prompt = await askThroughA('write the marker', 'Allow once', 'approve-marker');

    expect(await pressOnB(bob, prompt.ts, prompt.button)).toBe('This approval is not yours: only the person who asked, or an owner, can decide.');
    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('Allowed once.');
    await slack.waitFor(() => answers('The marker is written.').length === 1, 15_000, 'the answer');
    // B closed the prompt it was pressed on; a second press is told it was closed.
    expect(slack.seen(dm).find((message) => message.id === prompt.ts)).toMatchObject({ text: expect.stringContaining('allowed once by Ann'), buttons: [] });
    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('This request was already closed: allowed once by Ann.');
    expect(readFileSync(join(workspaceOfA(), 'approve-marker.txt'), 'utf8')).toBe('ran\n');
    expect(answers('The marker is written.')).toHaveLength(1);
    expect(readFileSync(join(dirs[1] as string, 'data', 'logs', 'hob.log'), 'utf8')).toContain('"waitsElsewhere":true');
  }, 60_000);

  it('deny on B: the tool does not run, and the run in A is told so', async () => {
    const seen = model.requests.length;
    model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> deny-marker.txt' } }] }, { text: 'Left it alone.' });
    const prompt = await askThroughA('write the other marker', 'Deny', 'deny-marker');

    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('Denied.');
    await slack.waitFor(() => answers('Left it alone.').length === 1, 15_000, 'the answer');
    expect(existsSync(join(workspaceOfA(), 'deny-marker.txt'))).toBe(false);
    expect(JSON.stringify(model.requests[seen + 1]?.body.messages)).toContain('The person denied permission for this call.');
    expect(slack.seen(dm).find((message) => message.id === prompt.ts)?.text).toContain('denied by Ann');
  }, 60_000);

  it('an ask_user answer pressed on B reaches the run in A; another person is refused', async () => {
    const seen = model.requests.length;
    model.push({ toolCalls: [{ name: 'ask_user', input: { question: 'Which colour?', options: ['red', 'blue'] } }] }, { text: 'Blue it is.' });
    const question = await askThroughA('pick a colour with me', 'blue', 'Which colour?');

    expect(await pressOnB(bob, question.ts, question.button)).toBe('This question is for someone else.');
    expect(await pressOnB(ann, question.ts, question.button)).toBe('You chose: blue');
    await slack.waitFor(() => answers('Blue it is.').length === 1, 15_000, 'the answer');
    expect(JSON.stringify(model.requests[seen + 1]?.body.messages)).toContain('blue');
    // A closed its question with what was answered.
    expect(slack.seen(dm).find((message) => message.id === question.ts)).toMatchObject({ text: expect.stringContaining('→ blue'), buttons: [] });
  }, 60_000);

  it('a decision whose notice was lost (the notices connection was down) still reaches the run once it reconnects', async () => {
    model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> lost-notice-marker.txt' } }] }, { text: 'Written after all.' });
    await askThroughA('write the third marker', 'Allow once', 'lost-notice-marker');
    // Decided as another process would, but its notice never arrives; then the listening connections drop.
    expect(db.bridge.query("UPDATE approvals SET decision = 'allow_once', decided_by = 'Ann' WHERE decision IS NULL").rowCount).toBe(1);
    db.bridge.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'hob-listen' AND datname = current_database()");
    await slack.waitFor(() => answers('Written after all.').length === 1, 15_000, 'the answer');
    expect(readFileSync(join(workspaceOfA(), 'lost-notice-marker.txt'), 'utf8')).toBe('ran\n');
  }, 60_000);

  it('/stop given through B stops the run in A', async () => {
    const seen = model.requests.length;
    model.push({ text: 'Too late.', delayMs: 5_000 });
    slack.socket.deliverOn = A;
    await slack.dm(ann, 'think it over slowly');
    await slack.waitFor(() => model.requests.length > seen, 10_000, 'the model call');
    const before = slack.seen(dm).length;
    slack.socket.deliverOn = B;
    await slack.dm(ann, '/stop');
    const said = () => slack.seen(dm).slice(before).map((message) => message.text);
    await slack.waitFor(() => said().includes('Stopping.') && said().includes('⏹ Stopped.'), 10_000, 'B saying it stops and A saying it stopped');
    // The stopped run answers nothing more: the next message is answered, and nothing else came.
    model.push({ text: 'Fresh start.' });
    slack.socket.deliverOn = A;
    await slack.dm(ann, 'hello again');
    await slack.waitFor(() => answers('Fresh start.').length === 1, 15_000, 'the next answer');
    expect(answers('Too late.')).toHaveLength(0);
  }, 60_000);

  const said = () => slack.seen(dm).map((message) => message.text);
  /** Sends `text` on `label`'s connection; resolves with how many messages the DM showed before. */
  async function sendOn(label: string, text: string): Promise<number> {
    const before = said().length;
    slack.socket.deliverOn = label;
    await slack.dm(ann, text);
    return before;
  }

  it('/status through B while the run is in flight in A: answered once, by A, which sees the run', async () => {
    const seen = model.requests.length;
    // The model answers once the status was shown: the run is in flight until then.
    let statusShown: () => void = () => undefined;
    model.push({ text: 'Slow thoughts done.', until: new Promise<void>((resolve) => (statusShown = resolve)) });
    await sendOn(A, 'think it over slowly once more');
    await slack.waitFor(() => model.requests.length > seen, 10_000, 'the slow model call');
    const before = await sendOn(B, '/status');
    const status = await slack.waitFor(() => said().slice(before).find((text) => text.startsWith('Model:')), 10_000, 'the status');
    statusShown();
    // Only A, where the run is in flight, knows it is running.
    expect(status).toContain('State: running');
    await slack.waitFor(() => answers('Slow thoughts done.').length === 1, 15_000, 'the slow answer');
    expect(said().filter((text) => text.startsWith('Model:'))).toHaveLength(1);
  }, 60_000);

  it('/new through B: the next message is answered once, in a fresh session that holds no earlier turn; /usage through B counts it', async () => {
    const before = await sendOn(B, '/new');
    await slack.waitFor(() => said().slice(before).includes('Started a new conversation. I no longer see the earlier messages.'), 10_000, 'the /new reply');

    const seen = model.requests.length;
    model.push({ text: 'Hello, new session.' });
    await sendOn(B, 'what did we talk about?');
    await slack.waitFor(() => answers('Hello, new session.').length === 1, 15_000, 'the answer in the new session');
    const request = model.requests[seen];
    expect(request?.body.messages).toHaveLength(1);
    expect(JSON.stringify(request?.body.messages)).not.toContain('slowly');
    expect(answers('Hello, new session.')).toHaveLength(1);
    expect(said().filter((text) => text.startsWith('Started a new conversation.'))).toHaveLength(1);

    // A's figures for the new session: one request so far.
    const usageFrom = await sendOn(B, '/usage');
    const usage = await slack.waitFor(() => said().slice(usageFrom).find((text) => text.startsWith('Requests:')), 10_000, 'the usage');
    expect(usage).toContain('Requests: 1');
    expect(said().filter((text) => text.startsWith('Requests:'))).toHaveLength(1);
  }, 60_000);

  it('"Always allow" pressed in B: A runs the same command for that person without asking', async () => {
    // Bob's DM runs in B: he is asked there and presses "Always allow".
    model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> always-marker.txt' } }] }, { text: 'Written in B.' });
    slack.socket.deliverOn = B;
    await slack.dm(bob, 'write the always marker');
    const bobDm = dmOf(bob.id);
    const prompt = await slack.waitFor(() => slack.web.messages.find((message) => message.channel === bobDm && message.buttons.some((button) => button.label === 'Always allow')), 15_000, "Bob's prompt");
    const before = slack.ephemeralsFor(bob).length;
    await slack.pressData(bob, bobDm, prompt.ts, prompt.buttons.find((button) => button.label === 'Always allow') as SlackButtonSeen);
    await slack.waitFor(() => slack.ephemeralsFor(bob)[before], 10_000, "the answer to Bob's press");
    await slack.waitFor(() => slack.seen(bobDm).some((message) => message.text === 'Written in B.'), 15_000, "B's answer");
    // A heard that the rules changed and read them again.
    await slack.waitFor(() => logOf(0).includes('"notice":"rules"'), 10_000, 'A reading the rules again');

    // The team channel's conversation starts in A: the same command runs there without a prompt.
    model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> always-marker.txt' } }] }, { text: 'Written in A.' });
    slack.socket.deliverOn = A;
    await slack.mention(bob, team, 'write the always marker here too');
    await slack.waitFor(() => slack.seen(team).some((message) => message.text === 'Written in A.'), 15_000, "A's answer");
    expect(slack.seen(team).filter((message) => message.buttons.length > 0)).toEqual([]);
    expect(readFileSync(join(workspaceOfA(), 'always-marker.txt'), 'utf8')).toBe('ran\n');
  }, 60_000);

  it('a background task running in A is stopped through B at once, and sends nothing more', async () => {
    // The task's model call never finishes on its own: only a stop ends it.
    model.push({ hang: true, text: 'half an answer' });
    slack.socket.deliverOn = A;
    await slack.dm(ann, '/bg count the stars slowly');
    const started = await slack.waitFor(() => slack.seen(dm).find((message) => message.text.startsWith('Started background task')), 15_000, 'the task starting');
    const id = /task (t[0-9a-f]{8})/.exec(started.text)?.[1] as string;
    await slack.waitFor(() => model.requests.some((request) => JSON.stringify(request.body.messages).includes('count the stars')), 10_000, "the task's model call");

    slack.socket.deliverOn = B;
    await slack.dm(ann, '/tasks');
    const list = await slack.waitFor(() => slack.web.messages.find((message) => message.channel === dm && message.buttons.some((button) => button.label === `Stop ${id}`)), 15_000, 'the task list');
    expect(await pressOnB(ann, list.ts, list.buttons.find((button) => button.label === `Stop ${id}`) as SlackButtonSeen)).toBe(`Stopped task ${id}.`);
    // A stops on B's notice (the lease renewal, its fallback, would not say so).
    await slack.waitFor(() => logOf(0).includes(`"task":"${id}"`) && logOf(0).includes('background task stopped from another process'), 10_000, 'A stopping the task');

    model.push({ text: 'Still here.' });
    slack.socket.deliverOn = A;
    await slack.dm(ann, 'are you there?');
    await slack.waitFor(() => answers('Still here.').length === 1, 15_000, 'the next answer');
    expect(slack.seen(dm).filter((message) => message.text.includes(`Background task ${id}`) || message.text.includes('half an answer'))).toEqual([]);
  }, 60_000);

  it('/permissions mode given to one process holds in both', async () => {
    slack.socket.deliverOn = A;
    await slack.dm(ann, '/permissions mode plan');
    await slack.waitFor(() => slack.seen(dm).some((message) => message.text.startsWith('Permission mode is now plan')), 10_000, 'the switch');
    await slack.waitFor(() => logOf(0).includes('"mode":"plan"') && logOf(1).includes('"mode":"plan"'), 10_000, 'both processes taking the mode');
    // Bob's DM runs in B, the team channel in A: each refuses a write without asking.
    for (const [process, channel, send] of [[B, dmOf(bob.id), () => slack.dm(bob, 'write the plan marker')], [A, team, () => slack.mention(bob, team, 'write the plan marker')]] as const) {
      const seen = model.requests.length;
      model.push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> plan-marker.txt' } }] }, { text: `Refused in ${process}.` });
      slack.socket.deliverOn = process;
      await send();
      await slack.waitFor(() => slack.seen(channel).some((message) => message.text === `Refused in ${process}.`), 15_000, `the answer in ${process}`);
      expect(JSON.stringify(model.requests[seen + 1]?.body.messages)).toContain('plan mode allows only read-only tools');
    }
    slack.socket.deliverOn = A;
    await slack.dm(ann, '/permissions mode default');
    await slack.waitFor(() => logOf(1).includes('"mode":"default"'), 10_000, 'B back in default mode');
  }, 60_000);
});
