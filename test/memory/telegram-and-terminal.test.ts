import '../support/env.js';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { runChat } from '../../src/cli/chat.js';
import { createGateway } from '../../src/cli/start-serve.js';
import { parseHobConfig } from '../../src/app/channels.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { sqliteDb } from '../support/sqlite-store.js';
import { adapter, fake, useTelegramTestbed } from '../support/telegram-testbed.js';

/**
 * The whole path through the real app, the real Telegram adapter against the fake Bot API,
 * and the terminal: told on Telegram, seen with /memory, used in the linked terminal after
 * /new and after a restart, and deleted.
 */

useTelegramTestbed();

const ann = { id: 42, first_name: 'Ann' };
const bob = { id: 43, first_name: 'Bob' };
const annChat = { id: 42, type: 'private' as const };

let running: { app: App; gateway: Gateway } | undefined;
afterEach(async () => {
  await running?.gateway.stop();
  await running?.app.close();
  running = undefined;
});

async function startHob(dataDir: string, model: ScriptedModel) {
  const config = parseHobConfig(
    `data_dir: ${dataDir}\nmodel: { api_key: test }\nchannels:\n  telegram: { token: "${fake.token}", api_root: "${fake.apiRoot}", allow_from: ["42", "43"] }\n`,
    { env: {} },
  );
  const app = await createApp({ config, channel: 'a terminal', provider: model, logDestination: 'silent' });
  const gateway = createGateway(app, [adapter()]);
  await gateway.start();
  running = { app, gateway };
  return running;
}

function terminal(app: App) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const done = runChat({ engine: app.engine('console:ann'), userId: 'ann', logger: app.logger, approvalTimeoutSeconds: 30, memory: app.memory, input, output, interactive: false });
  return { type: (line: string) => input.write(`${line}\n`), shown: () => shown, end: () => (input.end(), done) };
}

const lastText = (chatId: number) => fake.chat(chatId).at(-1)?.text ?? '';
const keyboard = (chatId: number) => JSON.stringify(fake.chat(chatId).at(-1)?.replyMarkup ?? null);

describe('memory through Telegram and the terminal', () => {
  it('remembers on Telegram, shows it with /memory, uses it in the linked terminal after /new and a restart, and forgets it', async () => {
    const dataDir = tempDir('hob-mem-e2e-');
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'memory_save', input: { content: 'Padel with Jonas every Thursday at 19:00, court 3', tags: ['sport'] } }] },
      { text: 'Saved.' },
    ]);
    let hob = await startHob(dataDir, model);

    fake.sendText(ann, annChat, 'Please remember: padel with Jonas every Thursday at 19:00, court 3');
    await fake.waitFor(() => lastText(42) === 'Saved.');
    expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('Saved memory');

    fake.sendText(ann, annChat, '/memory');
    await fake.waitFor(() => lastText(42).startsWith('What I remember about you (1; page 1 of 1)'));
    expect(lastText(42)).toContain('Padel with Jonas every Thursday at 19:00, court 3');
    expect(keyboard(42)).toContain('Forget 1');

    // Link the terminal (the owner) and Telegram: a code in one, /link CODE in the other.
    const console1 = terminal(hob.app);
    console1.type('/link');
    await fake.waitFor(() => /link code is (\d{6})/.exec(console1.shown()));
    const code = /link code is (\d{6})/.exec(console1.shown())?.[1];
    fake.sendText(ann, annChat, `/link ${code}`);
    await fake.waitFor(() => lastText(42).startsWith('Linked'));
    console1.type('/memory');
    await fake.waitFor(() => console1.shown().includes('Padel with Jonas'));
    await console1.end();

    // Restart hob; the terminal starts a new session and the snapshot carries the fact.
    await hob.gateway.stop();
    await hob.app.close();
    model.push({ text: 'Thursday at 19:00.' });
    hob = await startHob(dataDir, model);
    const console2 = terminal(hob.app);
    console2.type('/new');
    console2.type('when do I play padel?');
    await fake.waitFor(() => console2.shown().includes('Thursday at 19:00.'));
    await console2.end();
    expect(model.requests.at(-1)?.system).toContain('Padel with Jonas every Thursday at 19:00, court 3');

    // Bob cannot press Ann's buttons; Ann forgets everything after confirming.
    fake.sendText(ann, annChat, '/forget all');
    await fake.waitFor(() => lastText(42).startsWith('Forget all 1 entry'));
    const confirm = fake.chat(42).at(-1)?.messageId ?? 0;
    fake.pressButton(bob, annChat, confirm, 'mem:all:42', { unchecked: true });
    await fake.waitFor(() => fake.answeredCallbacks.some((answer) => answer.text === 'This button is for someone else.'));
    fake.pressButton(ann, annChat, confirm, 'mem:all:42');
    await fake.waitFor(() => fake.chat(42).find((message) => message.messageId === confirm)?.text.startsWith('Forgot all 1 entry'));
    expect(hob.app.memory.entries.count('console:ann')).toBe(0);
    expect(sqliteDb(hob.app.store).prepare("SELECT count(*) AS n FROM memory_fts WHERE memory_fts MATCH 'padel'").get()).toEqual({ n: 0 });
  });

  it('/remember, the Forget button, /forget ID and /settings on Telegram', async () => {
    const hob = await startHob(tempDir('hob-mem-tg-'), new ScriptedModel());
    fake.sendText(ann, annChat, '/remember the spare key is under the blue pot');
    await fake.waitFor(() => lastText(42).startsWith('I will remember that'));
    fake.sendText(ann, annChat, '/remember the boat is in slip 14');
    await fake.waitFor(() => fake.chat(42).length === 2);
    const [first] = hob.app.memory.entries.list('telegram:42');

    fake.sendText(ann, annChat, '/memory');
    await fake.waitFor(() => lastText(42).startsWith('What I remember about you (2'));
    const listing = fake.chat(42).at(-1);
    fake.pressButton(ann, annChat, listing?.messageId ?? 0, `mem:f:42:${first?.id}:0`);
    await fake.waitFor(() => fake.chat(42).find((message) => message.messageId === listing?.messageId)?.text.startsWith('What I remember about you (1'));
    expect(fake.answeredCallbacks.at(-1)?.text).toBe('Forgotten.');

    const [second] = hob.app.memory.entries.list('telegram:42');
    fake.sendText(bob, { id: 43, type: 'private' }, `/forget ${second?.id}`);
    await fake.waitFor(() => lastText(43).includes('was not found'));
    fake.sendText(ann, annChat, `/forget ${second?.id}`);
    await fake.waitFor(() => lastText(42) === `Forgot ${second?.id}.`);

    fake.sendText(ann, annChat, '/settings timezone europe/rome');
    await fake.waitFor(() => lastText(42) === 'Your timezone is now Europe/Rome.');
    fake.sendText(ann, annChat, '/settings timezone Mars/Olympus');
    await fake.waitFor(() => lastText(42).includes('is not a time zone'));
    fake.sendText(ann, annChat, '/settings');
    await fake.waitFor(() => lastText(42).startsWith('name: —'));
    expect(lastText(42)).toContain('timezone: Europe/Rome');
    expect(hob.app.memory.timezoneFor('telegram:42')).toBe('Europe/Rome');
  });
});
