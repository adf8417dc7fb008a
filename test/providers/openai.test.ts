import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAbortError, PromptTooLongError } from '../../src/core/errors.js';
import type { Message } from '../../src/core/messages.js';
import { createOpenAIProvider } from '../../src/providers/openai.js';
import type { ProviderClient, ToolSpec } from '../../src/providers/types.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { collect, doneOf, errorOf, request, textOf } from './collect.js';

const readFile: ToolSpec = {
  name: 'read_file',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const listDir: ToolSpec = { name: 'list_dir', description: 'List a directory', inputSchema: { type: 'object', properties: {} } };

let fake: FakeOpenAI;
let provider: ProviderClient;
const signal = new AbortController().signal;

beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test' });
  provider = createOpenAIProvider({ apiKey: 'sk-test', baseUrl: fake.baseUrl, model: 'gpt-4.1' });
});
afterEach(async () => {
  await fake.close();
});

describe('openai provider: streaming', () => {
  it('streams the reply text in pieces and ends with the whole assistant message', async () => {
    fake.push({ text: 'Hello there, friend', chunks: 3 });
    const events = await collect(provider.stream(request('hi'), signal));
    expect(events.filter((event) => event.type === 'text_delta').length).toBe(3);
    expect(textOf(events)).toBe('Hello there, friend');
    const done = doneOf(events);
    expect(done.message).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Hello there, friend' }] });
    expect(done.stopReason).toBe('end_turn');
    expect(done.model).toBe('gpt-4.1');
  });

  it('asks for usage and reports it, counting cached prompt tokens as cache reads', async () => {
    fake.push({ text: 'ok', usage: { prompt: 1200, completion: 9, cached: 1000 } });
    const done = doneOf(await collect(provider.stream(request('hi'), signal)));
    expect(fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect(done.usage).toEqual({ inputTokens: 200, outputTokens: 9, cacheReadTokens: 1000, cacheWriteTokens: 0 });
  });

  it('assembles tool calls from fragments, including two calls in one message', async () => {
    fake.push({
      text: 'Checking.',
      toolCalls: [
        { id: 'call_a', name: 'read_file', input: { path: 'notes/todo.md' } },
        { id: 'call_b', name: 'list_dir', input: {} },
      ],
    });
    const events = await collect(provider.stream(request('what is in my notes?', { tools: [readFile, listDir] }), signal));
    expect(events.filter((event) => event.type === 'tool_use')).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'read_file', input: { path: 'notes/todo.md' } },
      { type: 'tool_use', id: 'call_b', name: 'list_dir', input: {} },
    ]);
    const done = doneOf(events);
    expect(done.stopReason).toBe('tool_use');
    expect(done.message.content.map((block) => block.type)).toEqual(['text', 'tool_use', 'tool_use']);
  });

  it('hands malformed tool arguments on as __invalid_json so the engine can answer with an error result', async () => {
    fake.push({ toolCalls: [{ id: 'call_bad', name: 'read_file', rawArguments: '{"path": ' }] });
    const events = await collect(provider.stream(request('read', { tools: [readFile] }), signal));
    expect(events.find((event) => event.type === 'tool_use')).toMatchObject({ id: 'call_bad', input: { __invalid_json: '{"path": ' } });
  });
});

describe('openai provider: what is sent', () => {
  it('sends the system prompt, tools as functions, images as data URLs and tool results as tool messages', async () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me read.' }, { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: 'no such file', isError: true }, { type: 'text', text: 'hurry' }] },
    ];
    fake.push({ text: 'ok' });
    await collect(provider.stream(request('', { messages, tools: [readFile] }), signal));
    const body = fake.requests[0]?.body;
    expect(body?.tools).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: readFile.inputSchema } }]);
    expect(body?.messages).toEqual([
      { role: 'system', content: 'You are hob.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me read.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Error: no such file' },
      { role: 'user', content: 'hurry' },
    ]);
    expect(fake.requests[0]?.apiKey).toBe('sk-test');
  });

  it('uses max_tokens for compatible servers and max_completion_tokens for api.openai.com', async () => {
    fake.push({ text: 'ok' }, { text: 'ok' });
    await collect(provider.stream(request('hi'), signal));
    expect(fake.requests[0]?.body.max_tokens).toBe(1024);
    const official = createOpenAIProvider({ apiKey: 'sk-test', baseUrl: fake.baseUrl, model: 'gpt-5', maxTokensField: 'max_completion_tokens' });
    await collect(official.stream(request('hi'), signal));
    expect(fake.requests[1]?.body.max_completion_tokens).toBe(1024);
    expect(fake.requests[1]?.body.max_tokens).toBeUndefined();
  });
});

describe('openai provider: failures arrive as one error event', () => {
  it('a 429 is retryable and carries the retry-after delay', async () => {
    fake.push({ status: 429, retryAfterSeconds: 3 });
    const failure = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(true);
    expect(failure.error.retryAfterMs).toBe(3000);
  });

  it('a 500 is retryable', async () => {
    fake.push({ status: 500 });
    expect(errorOf(await collect(provider.stream(request('hi'), signal))).error.retryable).toBe(true);
  });

  it('a 429 for an exhausted quota is not retryable', async () => {
    fake.push({ status: 429, code: 'insufficient_quota', message: 'You exceeded your current quota' });
    expect(errorOf(await collect(provider.stream(request('hi'), signal))).error.retryable).toBe(false);
  });

  it('context_length_exceeded surfaces as PromptTooLongError', async () => {
    fake.push({ promptTooLong: true });
    const failure = errorOf(await collect(provider.stream(request('hi'), signal)));
    expect(failure.error).toBeInstanceOf(PromptTooLongError);
    expect(failure.error.retryable).toBe(false);
  });

  it('a rejected API key is not retryable and the message names the api key', async () => {
    const wrongKey = createOpenAIProvider({ apiKey: 'sk-wrong', baseUrl: fake.baseUrl, model: 'gpt-4.1' });
    const failure = errorOf(await collect(wrongKey.stream(request('hi'), signal)));
    expect(failure.error.retryable).toBe(false);
    expect(failure.error.message).toMatch(/api.key/i);
  });

  it('an error chunk mid-stream keeps the streamed text and reports streamed=true', async () => {
    fake.push({ errorMidStream: true, text: 'Half an ans' });
    const events = await collect(provider.stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half an ans');
    const failure = errorOf(events);
    expect(failure.streamed).toBe(true);
    expect(failure.error.retryable).toBe(true);
  });

  it('a connection dropped mid-stream is an error after the streamed text, not a short answer', async () => {
    fake.push({ errorMidStream: true, text: 'Half', mode: 'socket' });
    const events = await collect(provider.stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half');
    expect(errorOf(events).streamed).toBe(true);
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
