import '../support/env.js';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { runChat } from '../../src/cli/chat.js';
import { runSessions } from '../../src/cli/sessions.js';
import { createGateway } from '../../src/cli/start-serve.js';
import { parseHobConfig } from '../../src/app/channels.js';
import type { HobConfig } from '../../src/config/schema.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { SqliteSessionArchive } from '../../src/store/sqlite/session-archive.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { adapter, fake, useTelegramTestbed } from '../support/telegram-testbed.js';

/**
 * Past sessions belong to the linked person: what Ann said on Telegram is listed, resumed and
 * searched from her linked terminal (whichever side made the link code), and never by Bob.
 * The real app and Telegram adapter against the fake Bot API, and the real terminal chat.
 */

useTelegramTestbed();

const ann = { id: 42, first_name: 'Ann' };
const bob = { id: 43, first_name: 'Bob' };
const annChat = { id: 42, type: 'private' as const };
const bobChat = { id: 43, type: 'private' as const };

let running: { app: App; gateway: Gateway; config: HobConfig } | undefined;
afterEach(async () => {
  await running?.gateway.stop();
  await running?.app.close();
  running = undefined;
});

async function startHob(model: ScriptedModel) {
  const config = parseHobConfig(
    `data_dir: ${tempDir('hob-sessions-linked-')}\nmodel: { api_key: test }\nchannels:\n  telegram: { token: "${fake.token}", api_root: "${fake.apiRoot}", allow_from: ["42", "43"] }\n`,
    { env: {} },
  );
  const app = await createApp({ config, channel: 'a terminal', provider: model, logDestination: 'silent' });
  const gateway = createGateway(app, [adapter()]);
  await gateway.start();
  running = { app, gateway, config };
  return running;
}

function terminal(app: App) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const done = runChat({
    engine: app.engine('console:ann'),
    userId: 'ann',
    logger: app.logger,
    approvalTimeoutSeconds: 30,
    memory: app.memory,
    archive: app.store.archive,
    input,
    output,
    interactive: false,
  });
  return { type: (line: string) => input.write(`${line}\n`), shown: () => shown, end: () => (input.end(), done) };
}

function hobSessionsList(config: HobConfig): string {
  let text = '';
  const out = new PassThrough();
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  runSessions(config, 'ann', 'list', undefined, {}, out);
  return text;
}

const lastText = (chatId: number) => fake.chat(chatId).at(-1)?.text ?? '';
const said = (chatId: number, text: string) => fake.waitFor(() => fake.chat(chatId).some((message) => message.text.includes(text)));

describe('past sessions of a linked person', () => {
  it('lists, resumes and searches Telegram sessions from the terminal that made the link code, never Bob\'s', async () => {
    const model = new ScriptedModel([{ text: 'Noted, Ann.' }, { text: 'Noted, Bob.' }, { text: 'Garden noted.' }]);
    const hob = await startHob(model);
    fake.sendText(ann, annChat, 'The router goes in the hallway closet');
    await said(42, 'Noted, Ann.');
    fake.sendText(bob, bobChat, 'My router sits in the attic');
    await said(43, 'Noted, Bob.');

    // The terminal makes the code; Telegram joins it (its earlier session goes along).
    const console1 = terminal(hob.app);
    console1.type('/link');
    await fake.waitFor(() => /link code is (\d{6})/.exec(console1.shown()));
    const code = /link code is (\d{6})/.exec(console1.shown())?.[1];
    fake.sendText(ann, annChat, `/link ${code}`);
    await fake.waitFor(() => lastText(42).startsWith('Linked'));
    fake.sendText(ann, annChat, '/new');
    await said(42, 'Started a new conversation');
    fake.sendText(ann, annChat, 'Plan the garden for spring');
    await said(42, 'Garden noted.');

    console1.type('/sessions');
    await fake.waitFor(() => console1.shown().includes('Your conversations, newest first'));
    const listing = console1.shown().slice(console1.shown().indexOf('Your conversations'));
    expect(listing).toMatch(/1\. Plan the garden for spring — [^\n]*\n2\. The router goes in the hallway closet — /);
    expect(listing).not.toContain('attic');

    model.push({ toolCalls: [{ name: 'session_search', input: { query: 'router' } }] }, { text: 'In the hallway closet.' });
    console1.type('/resume 2');
    console1.type('Where did we decide the router goes?');
    await fake.waitFor(() => console1.shown().includes('In the hallway closet.'));
    expect(console1.shown()).toContain('Resumed “The router goes in the hallway closet”');
    const found = JSON.stringify(model.requests.at(-1)?.messages.at(-1));
    expect(found).toContain('hallway');
    expect(found).not.toContain('attic');
    await console1.end();

    expect(hobSessionsList(hob.config)).toMatch(/1\. The router goes in the hallway closet — [^\n]*\n2\. Plan the garden for spring — /);

    // Bob sees only his own.
    fake.sendText(bob, bobChat, '/sessions');
    await said(43, 'Your conversations, newest first');
    expect(lastText(43)).toContain('My router sits in the attic');
    expect(lastText(43)).not.toMatch(/hallway|garden/);
  });

  it('lists Telegram and terminal sessions together in a terminal that joined with a Telegram code', async () => {
    const model = new ScriptedModel([{ text: 'Boiler noted.' }, { text: 'Hello from hob.' }]);
    const hob = await startHob(model);
    fake.sendText(ann, annChat, 'The boiler service is on May 3');
    await said(42, 'Boiler noted.');
    fake.sendText(ann, annChat, '/link');
    await said(42, 'link code is');
    const code = /link code is (\d{6})/.exec(lastText(42))?.[1];

    const console1 = terminal(hob.app);
    console1.type(`/link ${code}`);
    await fake.waitFor(() => console1.shown().includes('Linked'));
    console1.type('hi from the terminal');
    await fake.waitFor(() => console1.shown().includes('Hello from hob.'));
    console1.type('/sessions');
    await fake.waitFor(() => console1.shown().includes('Your conversations, newest first'));
    expect(console1.shown()).toMatch(/1\. hi from the terminal — [^\n]* \(current\)\n2\. The boiler service is on May 3 — /);
    await console1.end();

    expect(hobSessionsList(hob.config)).toMatch(/1\. hi from the terminal — [^\n]*\n2\. The boiler service is on May 3 — /);
    fake.sendText(bob, bobChat, '/sessions');
    await said(43, 'no past conversations');
  });
});
