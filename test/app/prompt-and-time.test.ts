import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

/**
 * The model knows when each message was sent, and the system prompt stays the same all day,
 * so the prompt cache holds between messages minutes apart.
 */

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('system prompt and message times', () => {
  it('stamps each message with its time and keeps the system prompt unchanged between messages', async () => {
    let now = Date.UTC(2026, 10, 29, 20, 55);
    const model = new ScriptedModel([{ text: 'Noted.' }, { text: 'Three minutes later.' }]);
    const config = parseHobConfig(`data_dir: ${tempDir('hob-time-')}\ntimezone: Europe/Berlin\nmodel: { api_key: test }\n`, { env: {} });
    app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent', clock: { now: () => now } });
    const engine = app.engine('console:local');
    const options = () => ({ userId: 'ann', interaction: answering(), signal: new AbortController().signal });
    await collect(engine.submit('remember the milk', options()));
    now += 3 * 60_000;
    await collect(engine.submit('what time is it?', options()));

    const [first, second] = model.requests;
    expect(first?.system).toContain('Today is Sunday, 29 November 2026 (timezone Europe/Berlin)');
    expect(second?.system).toBe(first?.system);
    expect(second?.messages[0]?.content[0]).toEqual({ type: 'text', text: '[Sun, 29 Nov 2026, 21:55]' });
    expect(second?.messages.at(-1)?.content[0]).toEqual({ type: 'text', text: '[Sun, 29 Nov 2026, 21:58]' });
    expect(second?.messages.at(-1)?.content[1]).toEqual({ type: 'text', text: 'what time is it?' });
  });
});
