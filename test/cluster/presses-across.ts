/**
 * issue 23, the presses part of several-processes.test.ts (its processes, started once for the
 * file): two `hob start` processes on one PostgreSQL database and one Slack app (one Socket
 * Mode connection each). A conversation runs in the process its message reached (A); the
 * buttons of its approval and its question are pressed through the other (B): B decides in
 * the database, answers the press and closes the prompt, and A's run goes on. Commands for the
 * conversation typed through B act in A, where it runs, and are answered once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { expect, it } from 'vitest';
import type { FakeAnthropic } from '../fakes/anthropic.js';
import type { FakeSlack } from '../fakes/slack/index.js';
import { dmOf, type SlackButtonSeen } from '../fakes/slack/web-api.js';
import type { HobNode } from '../support/hob-cluster.js';

/** Ann and Bob may talk to hob on Slack; the processes answer in the team channel too. */
export const ann = { id: 'UANN', name: 'Ann' };
export const bob = { id: 'UBOB', name: 'Bob' };
export const team = 'CTEAM';

export type PressesContext = {
  model(): FakeAnthropic;
  slack(): FakeSlack;
  db(): pg.Client;
  /** The process the conversations run in, and the one the presses and commands go through (both serving Ann, Bob and the team channel). */
  a(): HobNode;
  b(): HobNode;
};

/**
 * Defines the presses cases (in the caller's describe, after its hooks). They push the fake
 * model's answers and count its requests: nothing else may be talking to the model meanwhile.
 */
export function pressesAcrossCases(context: PressesContext): void {
  const model = () => context.model();
  const slack = () => context.slack();
  const labelOf = (node: HobNode) => node.label as string;
  const dm = dmOf(ann.id);

  /** Ann's DM reaches A; resolves with the bot's message that has `label` among its buttons, and that button. */
  async function askThroughA(text: string, label: string, about: string): Promise<{ ts: string; button: SlackButtonSeen }> {
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, text);
    const prompt = await slack().waitFor(() => slack().web.messages.find((message) => message.channel === dm && message.text.includes(about) && message.buttons.some((button) => button.label === label)), 15_000, `the prompt about ${about}`);
    return { ts: prompt.ts, button: prompt.buttons.find((button) => button.label === label) as SlackButtonSeen };
  }

  /** Presses on B; resolves with the words the presser was shown. */
  async function pressOnB(who: typeof ann, ts: string, button: SlackButtonSeen): Promise<string> {
    slack().socket.deliverOn = labelOf(context.b());
    const before = slack().ephemeralsFor(who).length;
    // As Slack sends it, also for a button already gone from the message (a second tap before the edit showed).
    await slack().pressData(who, dm, ts, button);
    return slack().waitFor(() => slack().ephemeralsFor(who)[before], 10_000, `the answer to ${who.name}'s press`);
  }

  const answers = (text: string) => slack().seen(dm).filter((message) => message.text === text);
  const workspaceOfA = () => join(context.a().dir, 'data', 'workspace');
  const logOf = (node: HobNode) => readFileSync(join(node.dir, 'data', 'logs', 'hob.log'), 'utf8');

  it('approve on B: another person is refused, then the tool runs once in A and the answer arrives once', async () => {
    model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> approve-marker.txt' } }] }, { text: 'The marker is written.' });
    const prompt = await askThroughA('write the marker', 'Allow once', 'approve-marker');

    expect(await pressOnB(bob, prompt.ts, prompt.button)).toBe('This approval is not yours: only the person who asked, or an owner, can decide.');
    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('Allowed once.');
    await slack().waitFor(() => answers('The marker is written.').length === 1, 15_000, 'the answer');
    // B closed the prompt it was pressed on; a second press is told it was closed.
    expect(slack().seen(dm).find((message) => message.id === prompt.ts)).toMatchObject({ text: expect.stringContaining('allowed once by Ann'), buttons: [] });
    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('This request was already closed: allowed once by Ann.');
    expect(readFileSync(join(workspaceOfA(), 'approve-marker.txt'), 'utf8')).toBe('ran\n');
    expect(answers('The marker is written.')).toHaveLength(1);
    expect(logOf(context.b())).toContain('"waitsElsewhere":true');
  }, 60_000);

  it('deny on B: the tool does not run, and the run in A is told so', async () => {
    const seen = model().requests.length;
    model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> deny-marker.txt' } }] }, { text: 'Left it alone.' });
    const prompt = await askThroughA('write the other marker', 'Deny', 'deny-marker');

    expect(await pressOnB(ann, prompt.ts, prompt.button)).toBe('Denied.');
    await slack().waitFor(() => answers('Left it alone.').length === 1, 15_000, 'the answer');
    expect(existsSync(join(workspaceOfA(), 'deny-marker.txt'))).toBe(false);
    expect(JSON.stringify(model().requests[seen + 1]?.body.messages)).toContain('The person denied permission for this call.');
    expect(slack().seen(dm).find((message) => message.id === prompt.ts)?.text).toContain('denied by Ann');
  }, 60_000);

  it('an ask_user answer pressed on B reaches the run in A; another person is refused', async () => {
    const seen = model().requests.length;
    model().push({ toolCalls: [{ name: 'ask_user', input: { question: 'Which colour?', options: ['red', 'blue'] } }] }, { text: 'Blue it is.' });
    const question = await askThroughA('pick a colour with me', 'blue', 'Which colour?');

    expect(await pressOnB(bob, question.ts, question.button)).toBe('This question is for someone else.');
    expect(await pressOnB(ann, question.ts, question.button)).toBe('You chose: blue');
    await slack().waitFor(() => answers('Blue it is.').length === 1, 15_000, 'the answer');
    expect(JSON.stringify(model().requests[seen + 1]?.body.messages)).toContain('blue');
    // A closed its question with what was answered.
    expect(slack().seen(dm).find((message) => message.id === question.ts)).toMatchObject({ text: expect.stringContaining('→ blue'), buttons: [] });
  }, 60_000);

  it('a decision whose notice was lost (the notices connection was down) still reaches the run once it reconnects', async () => {
    model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> lost-notice-marker.txt' } }] }, { text: 'Written after all.' });
    await askThroughA('write the third marker', 'Allow once', 'lost-notice-marker');
    // Decided as another process would, but its notice never arrives; then the listening connections drop.
    expect((await context.db().query("UPDATE approvals SET decision = 'allow_once', decided_by = 'Ann' WHERE decision IS NULL")).rowCount).toBe(1);
    await context.db().query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'hob-listen' AND datname = current_database()");
    await slack().waitFor(() => answers('Written after all.').length === 1, 15_000, 'the answer');
    expect(readFileSync(join(workspaceOfA(), 'lost-notice-marker.txt'), 'utf8')).toBe('ran\n');
  }, 60_000);

  it('/stop given through B stops the run in A', async () => {
    const seen = model().requests.length;
    model().push({ text: 'Too late.', delayMs: 5_000 });
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, 'think it over slowly');
    await slack().waitFor(() => model().requests.length > seen, 10_000, 'the model call');
    const before = slack().seen(dm).length;
    slack().socket.deliverOn = labelOf(context.b());
    await slack().dm(ann, '/stop');
    const said = () => slack().seen(dm).slice(before).map((message) => message.text);
    await slack().waitFor(() => said().includes('Stopping.') && said().includes('⏹ Stopped.'), 10_000, 'B saying it stops and A saying it stopped');
    // The stopped run answers nothing more: the next message is answered, and nothing else came.
    model().push({ text: 'Fresh start.' });
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, 'hello again');
    await slack().waitFor(() => answers('Fresh start.').length === 1, 15_000, 'the next answer');
    expect(answers('Too late.')).toHaveLength(0);
  }, 60_000);

  const said = () => slack().seen(dm).map((message) => message.text);
  /** Sends `text` on the connection labelled `connection`; resolves with how many messages the DM showed before. */
  async function sendOn(connection: string, text: string): Promise<number> {
    const before = said().length;
    slack().socket.deliverOn = connection;
    await slack().dm(ann, text);
    return before;
  }

  it('/status through B while the run is in flight in A: answered once, by A, which sees the run', async () => {
    const seen = model().requests.length;
    // The model answers once the status was shown: the run is in flight until then.
    let statusShown: () => void = () => undefined;
    model().push({ text: 'Slow thoughts done.', until: new Promise<void>((resolve) => (statusShown = resolve)) });
    await sendOn(labelOf(context.a()), 'think it over slowly once more');
    await slack().waitFor(() => model().requests.length > seen, 10_000, 'the slow model call');
    const before = await sendOn(labelOf(context.b()), '/status');
    const status = await slack().waitFor(() => said().slice(before).find((text) => text.startsWith('Model:')), 10_000, 'the status');
    statusShown();
    // Only A, where the run is in flight, knows it is running.
    expect(status).toContain('State: running');
    await slack().waitFor(() => answers('Slow thoughts done.').length === 1, 15_000, 'the slow answer');
    expect(said().filter((text) => text.startsWith('Model:'))).toHaveLength(1);
  }, 60_000);

  it('/new through B: the next message is answered once, in a fresh session that holds no earlier turn; /usage through B counts it', async () => {
    const before = await sendOn(labelOf(context.b()), '/new');
    await slack().waitFor(() => said().slice(before).includes('Started a new conversation. I no longer see the earlier messages.'), 10_000, 'the /new reply');

    const seen = model().requests.length;
    model().push({ text: 'Hello, new session.' });
    await sendOn(labelOf(context.b()), 'what did we talk about?');
    await slack().waitFor(() => answers('Hello, new session.').length === 1, 15_000, 'the answer in the new session');
    const request = model().requests[seen];
    expect(request?.body.messages).toHaveLength(1);
    expect(JSON.stringify(request?.body.messages)).not.toContain('slowly');
    expect(answers('Hello, new session.')).toHaveLength(1);
    expect(said().filter((text) => text.startsWith('Started a new conversation.'))).toHaveLength(1);

    // A's figures for the new session: one request so far.
    const usageFrom = await sendOn(labelOf(context.b()), '/usage');
    const usage = await slack().waitFor(() => said().slice(usageFrom).find((text) => text.startsWith('Requests:')), 10_000, 'the usage');
    expect(usage).toContain('Requests: 1');
    expect(said().filter((text) => text.startsWith('Requests:'))).toHaveLength(1);
  }, 60_000);

  it('"Always allow" pressed in B: A runs the same command for that person without asking', async () => {
    // Bob's DM runs in B: he is asked there and presses "Always allow".
    model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> always-marker.txt' } }] }, { text: 'Written in B.' });
    slack().socket.deliverOn = labelOf(context.b());
    await slack().dm(bob, 'write the always marker');
    const bobDm = dmOf(bob.id);
    const prompt = await slack().waitFor(() => slack().web.messages.find((message) => message.channel === bobDm && message.buttons.some((button) => button.label === 'Always allow')), 15_000, "Bob's prompt");
    const before = slack().ephemeralsFor(bob).length;
    await slack().pressData(bob, bobDm, prompt.ts, prompt.buttons.find((button) => button.label === 'Always allow') as SlackButtonSeen);
    await slack().waitFor(() => slack().ephemeralsFor(bob)[before], 10_000, "the answer to Bob's press");
    await slack().waitFor(() => slack().seen(bobDm).some((message) => message.text === 'Written in B.'), 15_000, "B's answer");
    // A heard that the rules changed and read them again.
    await slack().waitFor(() => logOf(context.a()).includes('"notice":"rules"'), 10_000, 'A reading the rules again');

    // The team channel's conversation starts in A: the same command runs there without a prompt.
    model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> always-marker.txt' } }] }, { text: 'Written in A.' });
    slack().socket.deliverOn = labelOf(context.a());
    await slack().mention(bob, team, 'write the always marker here too');
    await slack().waitFor(() => slack().seen(team).some((message) => message.text === 'Written in A.'), 15_000, "A's answer");
    expect(slack().seen(team).filter((message) => message.buttons.length > 0)).toEqual([]);
    expect(readFileSync(join(workspaceOfA(), 'always-marker.txt'), 'utf8')).toBe('ran\n');
  }, 60_000);

  it('a background task running in A is stopped through B at once, and sends nothing more', async () => {
    // The task's model call never finishes on its own: only a stop ends it.
    model().push({ hang: true, text: 'half an answer' });
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, '/bg count the stars slowly');
    const started = await slack().waitFor(() => slack().seen(dm).find((message) => message.text.startsWith('Started background task')), 15_000, 'the task starting');
    const id = /task (t[0-9a-f]{8})/.exec(started.text)?.[1] as string;
    await slack().waitFor(() => model().requests.some((request) => JSON.stringify(request.body.messages).includes('count the stars')), 10_000, "the task's model call");

    slack().socket.deliverOn = labelOf(context.b());
    await slack().dm(ann, '/tasks');
    const list = await slack().waitFor(() => slack().web.messages.find((message) => message.channel === dm && message.buttons.some((button) => button.label === `Stop ${id}`)), 15_000, 'the task list');
    expect(await pressOnB(ann, list.ts, list.buttons.find((button) => button.label === `Stop ${id}`) as SlackButtonSeen)).toBe(`Stopped task ${id}.`);
    // A stops on B's notice (the lease renewal, its fallback, would not say so).
    await slack().waitFor(() => logOf(context.a()).includes(`"task":"${id}"`) && logOf(context.a()).includes('background task stopped from another process'), 10_000, 'A stopping the task');

    model().push({ text: 'Still here.' });
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, 'are you there?');
    await slack().waitFor(() => answers('Still here.').length === 1, 15_000, 'the next answer');
    expect(slack().seen(dm).filter((message) => message.text.includes(`Background task ${id}`) || message.text.includes('half an answer'))).toEqual([]);
  }, 60_000);

  it('/permissions mode given to one process holds in both', async () => {
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, '/permissions mode plan');
    await slack().waitFor(() => slack().seen(dm).some((message) => message.text.startsWith('Permission mode is now plan')), 10_000, 'the switch');
    await slack().waitFor(() => logOf(context.a()).includes('"mode":"plan"') && logOf(context.b()).includes('"mode":"plan"'), 10_000, 'both processes taking the mode');
    // Bob's DM runs in B, the team channel in A: each refuses a write without asking.
    for (const [process, node, channel, send] of [['B', context.b(), dmOf(bob.id), () => slack().dm(bob, 'write the plan marker')], ['A', context.a(), team, () => slack().mention(bob, team, 'write the plan marker')]] as const) {
      const seen = model().requests.length;
      model().push({ toolCalls: [{ name: 'bash', input: { command: 'echo ran >> plan-marker.txt' } }] }, { text: `Refused in ${process}.` });
      slack().socket.deliverOn = labelOf(node);
      await send();
      await slack().waitFor(() => slack().seen(channel).some((message) => message.text === `Refused in ${process}.`), 15_000, `the answer in ${process}`);
      expect(JSON.stringify(model().requests[seen + 1]?.body.messages)).toContain('plan mode allows only read-only tools');
    }
    slack().socket.deliverOn = labelOf(context.a());
    await slack().dm(ann, '/permissions mode default');
    await slack().waitFor(() => logOf(context.b()).includes('"mode":"default"'), 10_000, 'B back in default mode');
    // The caller's later cases: the fake spreads the events over the processes again.
    slack().socket.deliverOn = undefined;
  }, 60_000);
}
