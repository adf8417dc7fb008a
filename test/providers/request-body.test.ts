import '../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/providers/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { collect, request, textOf } from './collect.js';

/**
 * hob hands the SDKs' JSON to fetch as UTF-8 bytes rather than as a string (src/core/lean-fetch.ts):
 * what the model reads must stay exactly what the person wrote, in any script, at any length.
 */
const WRITTEN = `Grüße — 你好, ${'мир 👋🏽 '.repeat(12_000)}done`;
const signal = new AbortController().signal;

let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
beforeAll(async () => {
  anthropic = await startFakeAnthropic({ apiKey: 'sk-ant', contextWindow: 1_000_000 });
  openai = await startFakeOpenAI({ apiKey: 'sk-oai' });
});
afterAll(async () => {
  await anthropic.close();
  await openai.close();
});

describe('the request a model server receives', () => {
  it('carries the person’s text unchanged to Anthropic, emoji and all, over 100 KB', async () => {
    anthropic.push({ text: 'read it' });
    const client = createProvider({ provider: 'anthropic', name: 'claude-bench', apiKey: 'sk-ant', baseUrl: anthropic.baseUrl });
    expect(textOf(await collect(client.stream(request(WRITTEN), signal)))).toBe('read it');
    const sent = anthropic.requests.at(-1)?.body.messages.at(-1)?.content;
    expect(JSON.stringify(sent)).toContain(JSON.stringify(WRITTEN).slice(1, -1));
    expect(anthropic.requests.at(-1)?.headers['content-type']).toBe('application/json');
  });

  it('carries it unchanged to an OpenAI-compatible server', async () => {
    openai.push({ text: 'read it' });
    const client = createProvider({ provider: 'openai', name: 'gpt-bench', apiKey: 'sk-oai', baseUrl: openai.baseUrl });
    expect(textOf(await collect(client.stream(request(WRITTEN), signal)))).toBe('read it');
    const messages = openai.requests.at(-1)?.body.messages ?? [];
    expect(JSON.stringify(messages.at(-1))).toContain(JSON.stringify(WRITTEN).slice(1, -1));
  });
});
