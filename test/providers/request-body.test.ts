import '../support/env.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/providers/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import type { ToolSpec } from '../../src/providers/types.js';
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

/**
 * The tool definitions are encoded once per list and reused (src/providers/request-body.ts):
 * every request must still carry exactly the tools the conversation has now, whole, in order,
 * beside its own messages.
 */
describe('the tools a model server receives', () => {
  const tool = (name: string, property: string): ToolSpec => ({
    name,
    description: `${name} — reads “${property}” (ü, 你好)`,
    inputSchema: { type: 'object', properties: { [property]: { type: 'string' } }, required: [property] },
  });
  const first = [tool('read_file', 'path'), tool('web_search', 'query')];
  const more = [...first, tool('mcp__notes__find', 'text')];

  it('Anthropic: the same list on each request, a changed list as it is now, each with its own messages', async () => {
    const client = createProvider({ provider: 'anthropic', name: 'claude-bench', apiKey: 'sk-ant', baseUrl: anthropic.baseUrl });
    for (const [said, tools] of [['one', first], ['two', first], ['three', more], ['four', []]] as [string, ToolSpec[]][]) {
      anthropic.push({ text: 'ok' });
      expect(textOf(await collect(client.stream(request(said, { tools }), signal)))).toBe('ok');
    }
    const bodies = anthropic.requests.slice(-4).map((sent) => sent.body);
    expect(bodies.map((body) => body.tools?.map((sent) => sent.name))).toEqual([['read_file', 'web_search'], ['read_file', 'web_search'], ['read_file', 'web_search', 'mcp__notes__find'], undefined]);
    expect(bodies.map((body) => JSON.stringify(body.messages.at(-1)?.content))).toEqual(['one', 'two', 'three', 'four'].map((said) => expect.stringContaining(said)));
    expect(bodies[2]?.tools?.[2]).toEqual({ name: 'mcp__notes__find', description: more[2]?.description, input_schema: more[2]?.inputSchema, cache_control: { type: 'ephemeral' } });
    // The prompt cache's breakpoint stays on the last tool of each list, not on one an earlier list ended with.
    expect(bodies[2]?.tools?.map((sent) => sent.cache_control)).toEqual([undefined, undefined, { type: 'ephemeral' }]);
    expect(bodies.every((body) => body.model === 'claude-bench' && body.stream === true && body.system !== undefined)).toBe(true);
  });

  it('OpenAI-compatible: the same, in its wire form', async () => {
    const client = createProvider({ provider: 'openai', name: 'gpt-bench', apiKey: 'sk-oai', baseUrl: openai.baseUrl });
    for (const [said, tools] of [['one', first], ['two', more], ['three', first]] as [string, ToolSpec[]][]) {
      openai.push({ text: 'ok' });
      expect(textOf(await collect(client.stream(request(said, { tools }), signal)))).toBe('ok');
    }
    const bodies = openai.requests.slice(-3).map((sent) => sent.body);
    expect(bodies.map((body) => body.tools?.map((sent) => sent.function.name))).toEqual([['read_file', 'web_search'], ['read_file', 'web_search', 'mcp__notes__find'], ['read_file', 'web_search']]);
    expect(bodies[1]?.tools?.[2]).toEqual({ type: 'function', function: { name: 'mcp__notes__find', description: more[2]?.description, parameters: more[2]?.inputSchema } });
    expect(bodies.map((body) => JSON.stringify(body.messages.at(-1)))).toEqual(['one', 'two', 'three'].map((said) => expect.stringContaining(said)));
    expect(openai.requests.at(-1)?.headers['content-type']).toBe('application/json');
  });
});
