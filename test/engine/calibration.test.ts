import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import type { AgentEvent } from '../../src/core/events.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { answering, collect, tempDir } from '../support/engine.js';
import { personMessage, scriptedAnswer, writeNotes } from '../support/small-window.js';

/**
 * issue 17 / issue 20: hob counts tokens without a tokenizer; what each model's reported usage
 * taught it is kept, so after a restart even the first request is counted as the server counts.
 */

let fake: FakeOpenAI | undefined;
const apps: App[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await fake?.close();
  fake = undefined;
});

async function open(dataDir: string, baseUrl: string): Promise<App> {
  const config = parseHobConfig(`data_dir: ${dataDir}\nmodel: { provider: openai, name: local-model, base_url: "${baseUrl}", api_key: none, context_window: 16000, max_tokens: 1024 }\n`, { env: {} });
  const app = await createApp({ config, channel: 'a test', logDestination: 'silent' });
  writeNotes(config.tools.workspace);
  apps.push(app);
  return app;
}

/** Signed errors of hob's count against the server's, one per request. */
async function errorsOf(app: App, sessionKey: string, turns: number[], options: { release?: boolean } = {}): Promise<number[]> {
  const engine = app.engine(sessionKey);
  const errors: number[] = [];
  for (const turn of turns) {
    const events: AgentEvent[] = await collect(engine.submit(personMessage(turn), { userId: 'local', interaction: answering(), signal: new AbortController().signal }));
    for (const event of events) if (event.type === 'usage' && event.estimated) errors.push((event.estimated - event.usage.inputTokens) / event.usage.inputTokens);
    // As the gateway does past its budget of held history: the next message reads the rows back.
    if (options.release) expect(engine.releaseHistory()).toBe(true);
  }
  return errors;
}

describe('token counts learnt from the server', () => {
  it('are kept across a restart: the first request of the next run is counted within 5%', async () => {
    fake = await startFakeOpenAI({ server: 'vllm', contextWindow: 16_000 });
    fake.respondWith((request) => scriptedAnswer(request.body));
    const dir = tempDir('hob-calibration-');
    const firstRun = await errorsOf(await open(dir, fake.baseUrl), 'console:a', [1, 2, 3, 4, 5, 6, 7, 8]);
    // Nothing learnt yet: the first counts err, on the safe side; once it has seen two, they are close.
    expect(Math.max(...firstRun.slice(0, 2))).toBeGreaterThan(0.05);
    expect(Math.max(...firstRun.slice(2).map(Math.abs))).toBeLessThan(0.05);
    await apps.shift()?.close();

    // A restart, and a conversation with no count of its own yet, opening with a pasted log.
    const secondRun = await errorsOf(await open(dir, fake.baseUrl), 'console:b', [10, 11]);
    expect(Math.max(...secondRun.map(Math.abs))).toBeLessThan(0.05);
    // Another data folder has learnt nothing.
    const elsewhere = await errorsOf(await open(tempDir('hob-calibration-'), fake.baseUrl), 'console:c', [10]);
    expect(elsewhere[0]).toBeGreaterThan(0.05);
  });

  it('a history let go between messages and read back from the store is counted as closely', async () => {
    fake = await startFakeOpenAI({ server: 'vllm', contextWindow: 16_000 });
    fake.respondWith((request) => scriptedAnswer(request.body));
    const errors = await errorsOf(await open(tempDir('hob-calibration-'), fake.baseUrl), 'console:a', [1, 2, 3, 4, 5, 6, 7, 8], { release: true });
    expect(errors.length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...errors.slice(2).map(Math.abs))).toBeLessThan(0.05);
  });
});
