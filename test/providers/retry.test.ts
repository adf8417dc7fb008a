import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAbortError, PromptTooLongError } from '../../src/core/errors.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { createOpenAIProvider } from '../../src/providers/openai.js';
import { abortableSleep, withRetries, type RetryOptions } from '../../src/providers/retry.js';
import type { ProviderClient } from '../../src/providers/types.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { collect, doneOf, errorOf, recordingSleep, request, textOf } from './collect.js';

const signal = new AbortController().signal;

describe('withRetries over Anthropic', () => {
  let fake: FakeAnthropic;
  let delays: number[];
  let client: (options?: RetryOptions) => ProviderClient;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    const recorder = recordingSleep();
    delays = recorder.delays;
    const base = createAnthropicProvider({ apiKey: 'k', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-6' });
    client = (options = {}) => withRetries(base, { sleep: recorder.sleep, random: () => 0.5, ...options });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('waits exactly as long as retry-after asks after a 429, then answers', async () => {
    fake.push({ status: 429, retryAfterSeconds: 2 }, { text: 'Here you go' });
    const events = await collect(client().stream(request('hi'), signal));
    expect(delays).toEqual([2000]);
    expect(events.filter((event) => event.type === 'retry')).toMatchObject([{ type: 'retry', attempt: 2, delayMs: 2000 }]);
    expect(textOf(events)).toBe('Here you go');
    expect(doneOf(events).stopReason).toBe('end_turn');
    expect(fake.requests).toHaveLength(2);
  });

  it('retries a 500 with exponential backoff and full jitter until the model answers', async () => {
    fake.push({ status: 500 }, { status: 500 }, { status: 500 }, { text: 'ok' });
    const events = await collect(client({ baseDelayMs: 500 }).stream(request('hi'), signal));
    // random() = 0.5 → half of 500, 1000, 2000
    expect(delays).toEqual([250, 500, 1000]);
    expect(doneOf(events).message.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('retries an overloaded (529) model, then answers', async () => {
    fake.push({ status: 529 }, { text: 'back again' });
    const events = await collect(client().stream(request('hi'), signal));
    expect(textOf(events)).toBe('back again');
    expect(fake.requests).toHaveLength(2);
  });

  it('gives up after maxAttempts and reports the last error', async () => {
    fake.push({ status: 500 }, { status: 500 }, { status: 503 });
    const failure = errorOf(await collect(client({ maxAttempts: 3 }).stream(request('hi'), signal)));
    expect(failure.error.status).toBe(503);
    expect(fake.requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
  });

  it('never retries once text has streamed: the text stays and the error follows', async () => {
    fake.push({ errorMidStream: true, text: 'Half of it' }, { text: 'should not be asked for' });
    const events = await collect(client().stream(request('hi'), signal));
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'error']);
    expect(textOf(events)).toBe('Half of it');
    expect(errorOf(events).streamed).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('does not retry a prompt that is too long', async () => {
    fake.push({ promptTooLong: true }, { text: 'unused' });
    const failure = errorOf(await collect(client().stream(request('hi'), signal)));
    expect(failure.error).toBeInstanceOf(PromptTooLongError);
    expect(fake.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('does not retry a rejected API key', async () => {
    fake.push({ status: 401 }, { text: 'unused' });
    expect(errorOf(await collect(client().stream(request('hi'), signal))).error.status).toBe(401);
    expect(fake.requests).toHaveLength(1);
  });

  it('passes a retry-after longer than maxDelayMs through instead of holding the chat', async () => {
    fake.push({ status: 429, retryAfterSeconds: 120 }, { text: 'unused' });
    const failure = errorOf(await collect(client({ maxDelayMs: 30_000 }).stream(request('hi'), signal)));
    expect(failure.error.retryAfterMs).toBe(120_000);
    expect(delays).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it('an abort while the model is thinking ends at once, with no retry', async () => {
    fake.push({ hang: true }, { text: 'unused' });
    const controller = new AbortController();
    void fake.waitForRequests(1).then(() => controller.abort());
    const events = await collect(client().stream(request('hi'), controller.signal));
    expect(events.map((event) => event.type)).toEqual(['error']);
    expect(isAbortError(errorOf(events).error)).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('an abort during the backoff wait stops before another attempt', async () => {
    fake.push({ status: 529 }, { text: 'unused' });
    const controller = new AbortController();
    const abortingSleep = async (): Promise<void> => controller.abort();
    const events = await collect(client({ sleep: abortingSleep }).stream(request('hi'), controller.signal));
    expect(isAbortError(errorOf(events).error)).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('withRetries over OpenAI', () => {
  let fake: FakeOpenAI;
  let delays: number[];
  let client: ProviderClient;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    const recorder = recordingSleep();
    delays = recorder.delays;
    client = withRetries(createOpenAIProvider({ apiKey: 'k', baseUrl: fake.baseUrl, model: 'gpt-4.1' }), { sleep: recorder.sleep, random: () => 0.5 });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('honours retry-after on a 429, then answers', async () => {
    fake.push({ status: 429, retryAfterSeconds: 4 }, { text: 'ok' });
    const events = await collect(client.stream(request('hi'), signal));
    expect(delays).toEqual([4000]);
    expect(textOf(events)).toBe('ok');
  });

  it('retries a 500, then answers', async () => {
    fake.push({ status: 500 }, { text: 'ok' });
    expect(doneOf(await collect(client.stream(request('hi'), signal))).message.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(fake.requests).toHaveLength(2);
  });

  it('does not retry context_length_exceeded', async () => {
    fake.push({ promptTooLong: true }, { text: 'unused' });
    expect(errorOf(await collect(client.stream(request('hi'), signal))).error).toBeInstanceOf(PromptTooLongError);
    expect(fake.requests).toHaveLength(1);
  });

  it('never retries once text has streamed', async () => {
    fake.push({ errorMidStream: true, text: 'Half' }, { text: 'unused' });
    const events = await collect(client.stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half');
    expect(errorOf(events).streamed).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('withRetries with a client that breaks its contract', () => {
  it('turns a thrown exception into a final error event', async () => {
    const throwing: ProviderClient = {
      provider: 'broken',
      model: 'm',
      async *stream() {
        throw new Error('boom');
      },
    };
    const failure = errorOf(await collect(withRetries(throwing, { sleep: async () => {} }).stream(request('hi'), signal)));
    expect(failure.error.message).toContain('boom');
    expect(failure.error.retryable).toBe(false);
  });
});

describe('the default backoff sleep', () => {
  it('returns as soon as the run is stopped, not after the full wait', async () => {
    const controller = new AbortController();
    const waiting = abortableSleep(3_600_000, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
