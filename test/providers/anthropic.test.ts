import '../support/env.js';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAbortError, PromptTooLongError } from '../../src/core/errors.js';
import type { Message } from '../../src/core/messages.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import type { ProviderClient, ToolSpec } from '../../src/providers/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { collect, doneOf, errorOf, request, textOf } from './collect.js';

const readFile: ToolSpec = {
  name: 'read_file',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const listDir: ToolSpec = { name: 'list_dir', description: 'List a directory', inputSchema: { type: 'object', properties: {} } };

let fake: FakeAnthropic;
let provider: ProviderClient;
const signal = new AbortController().signal;

beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: 'sk-ant-test' });
  provider = createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-6' });
});
afterEach(async () => {
  await fake.close();
});

describe('anthropic provider: streaming', () => {
  it('streams the reply text in pieces and ends with the whole assistant message', async () => {
    fake.push({ text: 'Hello there, friend', chunks: 3 });
    const events = await collect(provider.stream(request('hi'), signal));
    const deltas = events.filter((event) => event.type === 'text_delta');
    expect(deltas.length).toBe(3);
    expect(textOf(events)).toBe('Hello there, friend');
    const done = doneOf(events);
    expect(done.message).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Hello there, friend' }] });
    expect(done.stopReason).toBe('end_turn');
    expect(done.model).toBe('claude-sonnet-4-6');
  });

  it('reports input, output and cache token usage', async () => {
    fake.push({ text: 'ok', usage: { input: 120, output: 7, cacheRead: 3000, cacheWrite: 450 } });
    const done = doneOf(await collect(provider.stream(request('hi'), signal)));
    expect(done.usage).toEqual({ inputTokens: 120, outputTokens: 7, cacheReadTokens: 3000, cacheWriteTokens: 450 });
  });

  it('emits each tool call with its parsed input, including two calls in one message', async () => {
    fake.push({
      text: 'Let me look.',
      toolCalls: [
        { id: 'toolu_a', name: 'read_file', input: { path: 'notes/todo.md' } },
        { id: 'toolu_b', name: 'list_dir', input: {} },
      ],
    });
    const events = await collect(provider.stream(request('what is in my notes?', { tools: [readFile, listDir] }), signal));
    const calls = events.filter((event) => event.type === 'tool_use');
    expect(calls).toEqual([
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'notes/todo.md' } },
      { type: 'tool_use', id: 'toolu_b', name: 'list_dir', input: {} },
    ]);
    const done = doneOf(events);
    expect(done.stopReason).toBe('tool_use');
    expect(done.message.content.map((block) => block.type)).toEqual(['text', 'tool_use', 'tool_use']);
  });

  it('hands malformed tool JSON on as __invalid_json so the engine can answer with an error result', async () => {
    fake.push({ toolCalls: [{ id: 'toolu_bad', name: 'read_file', rawJson: '{"path": "a' }] });
    const events = await collect(provider.stream(request('read a', { tools: [readFile] }), signal));
    expect(events.find((event) => event.type === 'tool_use')).toMatchObject({ input: { __invalid_json: '{"path": "a' } });
    expect(doneOf(events).stopReason).toBe('tool_use');
  });
});

describe('anthropic provider: what is sent', () => {
  it('marks the system prompt, the last tool and the newest message block for prompt caching', async () => {
    fake.push({ text: 'ok' });
    await collect(provider.stream(request('hi', { tools: [readFile, listDir] }), signal));
    const body = fake.requests[0]?.body;
    expect(body?.system).toEqual([{ type: 'text', text: 'You are hob.', cache_control: { type: 'ephemeral' } }]);
    expect(body?.tools?.map((tool) => tool.cache_control)).toEqual([undefined, { type: 'ephemeral' }]);
    expect(body?.messages.at(-1)?.content).toEqual([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }]);
    expect(body?.stream).toBe(true);
    expect(fake.requests[0]?.apiKey).toBe('sk-ant-test');
  });

  it('sends no cache_control when prompt caching is off', async () => {
    const plain = createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'm', promptCaching: false });
    fake.push({ text: 'ok' });
    await collect(plain.stream(request('hi', { tools: [readFile] }), signal));
    expect(JSON.stringify(fake.requests[0]?.body)).not.toContain('cache_control');
  });

  it('maps images, tool calls and tool results (with is_error) to API blocks', async () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'no such file', isError: true }] },
    ];
    fake.push({ text: 'ok' });
    await collect(createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'm', promptCaching: false }).stream(request('', { messages, tools: [readFile] }), signal));
    expect(fake.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'no such file', is_error: true }] },
    ]);
  });

  it('uses the model named in the request over its own', async () => {
    fake.push({ text: 'ok' });
    const done = doneOf(await collect(provider.stream(request('hi', { model: 'claude-haiku-4-5' }), signal)));
    expect(fake.requests[0]?.body.model).toBe('claude-haiku-4-5');
    expect(done.model).toBe('claude-haiku-4-5');
  });
});

describe('anthropic provider: thinking models in a tool loop', () => {
  it('sends a tool-calling turn back with its thinking block and signature, in order', async () => {
    fake.push({ thinking: 'The user wants the file; read it.', toolCalls: [{ id: 'toolu_t1', name: 'read_file', input: { path: 'a.md' } }] }, { text: 'It says hi.' });
    const first = doneOf(await collect(provider.stream(request('what does a.md say?', { tools: [readFile] }), signal)));
    // Stored with the message, so a tool loop resumed after a restart still has it.
    expect(first.message.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the file; read it.', signature: 'sig_msg_fake_1' },
      { type: 'tool_use', id: 'toolu_t1', name: 'read_file', input: { path: 'a.md' } },
    ]);

    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'what does a.md say?' }] },
      first.message,
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_t1', content: 'hi', isError: false }] },
    ];
    await collect(provider.stream(request('', { messages, tools: [readFile] }), signal));
    expect(fake.requests[1]?.body.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the file; read it.', signature: 'sig_msg_fake_1' },
      { type: 'tool_use', id: 'toolu_t1', name: 'read_file', input: { path: 'a.md' } },
    ]);
  });

  it('sends a turn that was rewritten since (e.g. by compaction) as rewritten, without the stale thinking', async () => {
    fake.push({ thinking: 'hmm', toolCalls: [{ id: 'toolu_t2', name: 'read_file', input: { path: 'a.md' } }] }, { text: 'ok' });
    const first = doneOf(await collect(provider.stream(request('go', { tools: [readFile] }), signal)));
    const rewritten: Message = { role: 'assistant', content: [{ type: 'text', text: '[summary]' }, ...first.message.content] };
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      rewritten,
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_t2', content: 'hi', isError: false }] },
    ];
    await collect(provider.stream(request('', { messages, tools: [readFile] }), signal));
    const sent = fake.requests[1]?.body.messages[1]?.content;
    expect(Array.isArray(sent) ? sent.map((block) => block.type) : sent).toEqual(['text', 'tool_use']);
  });
});

describe('anthropic provider: the stream as the network delivers it', () => {
  /** A fetch whose answers arrive a few bytes at a time, cut wherever the count falls (inside an event, a line, a character). */
  const inPieces = (size: number): typeof fetch => async (input, init) => {
    const response = await fetch(input, init);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.slice(at, at + size));
        controller.close();
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };

  it('an answer cut into 3-byte reads streams the same text, tool call and usage', async () => {
    const text = 'Grüße aus 東京 🎉, done.';
    fake.push({ text, chunks: 4, toolCalls: [{ id: 'toolu_x', name: 'read_file', input: { path: 'ö/日記.md' } }], usage: { input: 50, output: 9 } });
    const sliced = createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-6', fetch: inPieces(3) });
    const events = await collect(sliced.stream(request('hi', { tools: [readFile] }), signal));
    expect(textOf(events)).toBe(text);
    expect(events.filter((event) => event.type === 'tool_use')).toEqual([{ type: 'tool_use', id: 'toolu_x', name: 'read_file', input: { path: 'ö/日記.md' } }]);
    const done = doneOf(events);
    expect(done.usage.inputTokens).toBe(50);
    expect(done.usage.outputTokens).toBe(9);
    expect(done.stopReason).toBe('tool_use');
  });

  it('an error event cut across reads still ends the answer with the error it names', async () => {
    fake.push({ errorMidStream: true, text: 'Half an ans' });
    const sliced = createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'm', fetch: inPieces(2) });
    const events = await collect(sliced.stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half an ans');
    expect(errorOf(events).error.message).toContain('overloaded_error');
  });

  it('sends the API version the API requires, and the key as x-api-key', async () => {
    fake.push({ text: 'ok' });
    doneOf(await collect(provider.stream(request('hi'), signal)));
    const sent = fake.requests.at(-1);
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent?.headers['x-api-key']).toBe('sk-ant-test');
  });
});

describe('anthropic provider: failures arrive as one error event', () => {
  it('a 429 is retryable and carries the retry-after delay', async () => {
    fake.push({ status: 429, retryAfterSeconds: 7 });
    const failure = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(true);
    expect(failure.error.retryAfterMs).toBe(7000);
    expect(failure.error.status).toBe(429);
    expect(failure.streamed).toBe(false);
  });

  it('reads retry-after-ms and HTTP-date retry-after headers', async () => {
    fake.push({ status: 529, retryAfterMs: 1500 }, { status: 503, retryAfter: new Date(Date.now() + 60_000).toUTCString() });
    const first = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(first.error.retryAfterMs).toBe(1500);
    const second = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(second.error.retryAfterMs).toBeGreaterThan(50_000);
    expect(second.error.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('500 and 529 overloaded are retryable', async () => {
    fake.push({ status: 500 }, { status: 529 });
    const server = errorOf(await collect(provider.stream(request('hi'), signal)));
    const overloaded = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect([server.error.retryable, overloaded.error.retryable]).toEqual([true, true]);
    expect(overloaded.error.message).toContain('overloaded_error');
  });

  it('a prompt that is too long surfaces as PromptTooLongError, not retryable', async () => {
    fake.push({ promptTooLong: true });
    const failure = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(failure.error).toBeInstanceOf(PromptTooLongError);
    expect(failure.error.retryable).toBe(false);
    expect(failure.error.message).toContain('prompt is too long');
  });

  it('a rejected API key is not retryable and the message names the api key', async () => {
    const wrongKey = createAnthropicProvider({ apiKey: 'sk-ant-wrong', baseUrl: fake.baseUrl, model: 'm' });
    const failure = errorOf(await collect(wrongKey.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(false);
    expect(failure.error.status).toBe(401);
    expect(failure.error.message).toMatch(/api.key/i);
  });

  it('an error page that is not the API\'s JSON (a proxy\'s 502) is retryable and quotes the page', async () => {
    const proxy: typeof fetch = async () => new Response('<html><body>502 Bad Gateway</body></html>', { status: 502, headers: { 'content-type': 'text/html' } });
    const behindProxy = createAnthropicProvider({ apiKey: 'k', baseUrl: fake.baseUrl, model: 'm', fetch: proxy });
    const failure = errorOf(await collect(behindProxy.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(true);
    expect(failure.error.status).toBe(502);
    expect(failure.error.message).toContain('502 Bad Gateway');
  });

  it('an error event mid-stream keeps the streamed text and reports streamed=true', async () => {
    fake.push({ errorMidStream: true, text: 'Half an ans' });
    const events = await collect(provider.stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half an ans');
    const failure = errorOf(events);
    expect(failure.streamed).toBe(true);
    expect(failure.error.message).toContain('overloaded_error');
    expect(events.some((event) => event.type === 'done')).toBe(false);
  });

  it('an unreachable endpoint is a retryable connection error', async () => {
    const refused = async (): Promise<Response> => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const offline = createAnthropicProvider({ apiKey: 'k', baseUrl: fake.baseUrl, model: 'm', fetch: refused });
    const failure = errorOf(await collect(offline.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(true);
    expect(failure.error.message).toMatch(/connection/i);
  });

  it('a port nobody listens on is a retryable connection error (hob\'s own request path, not fetch)', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const offline = createAnthropicProvider({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}`, model: 'm' });
    const failure = errorOf(await collect(offline.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(true);
    expect(failure.error.message).toMatch(/connection/i);
  });

  it('aborting mid-answer ends the stream at once with a non-retryable "aborted" error', async () => {
    fake.push({ hang: true, text: 'Thinking' });
    const controller = new AbortController();
    const events = [];
    for await (const event of provider.stream(request('hi'), controller.signal)) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort();
    }
    const failure = errorOf(events);
    expect(isAbortError(failure.error)).toBe(true);
    expect(failure.error.retryable).toBe(false);
    expect(failure.streamed).toBe(true);
  });

  it('aborting before the answer starts ends the stream with an unstreamed abort error', async () => {
    fake.push({ hang: true });
    const controller = new AbortController();
    void fake.waitForRequests(1).then(() => controller.abort());
    const failure = errorOf(await collect(provider.stream(request('hi'), controller.signal)));
    expect(isAbortError(failure.error)).toBe(true);
    expect(failure.streamed).toBe(false);
  });
});
