import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PromptTooLongError } from '../../src/core/errors.js';
import { createProvider, type ProviderSettings } from '../../src/providers/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { collect, doneOf, errorOf, recordingSleep, request, textOf } from './collect.js';

const signal = new AbortController().signal;
const deps = () => ({ sleep: recordingSleep().sleep, random: () => 0 });

describe('createProvider with fallback models (Anthropic)', () => {
  let fake: FakeAnthropic;
  let settings: ProviderSettings;
  beforeEach(async () => {
    fake = await startFakeAnthropic({ apiKey: 'sk-ant' });
    settings = {
      provider: 'anthropic',
      name: 'claude-opus-4-8',
      apiKey: 'sk-ant',
      baseUrl: fake.baseUrl,
      fallback: ['claude-haiku-4-5'],
      retry: { maxAttempts: 2 },
    };
  });
  afterEach(async () => {
    await fake.close();
  });

  it('answers with the fallback model when the primary stays overloaded after its retries', async () => {
    fake.push({ status: 529 }, { status: 529 }, { text: 'Haiku here' });
    const events = await collect(createProvider(settings, deps()).stream(request('hi'), signal));
    expect(fake.requests.map((r) => r.body.model)).toEqual(['claude-opus-4-8', 'claude-opus-4-8', 'claude-haiku-4-5']);
    expect(textOf(events)).toBe('Haiku here');
    expect(doneOf(events).model).toBe('claude-haiku-4-5');
    expect(events.filter((event) => event.type === 'retry')).toHaveLength(1);
  });

  it('does not hide a prompt-too-long error behind the fallback model', async () => {
    fake.push({ promptTooLong: true }, { text: 'unused' });
    const failure = errorOf(await collect(createProvider(settings, deps()).stream(request('hi'), signal)));
    expect(failure.error).toBeInstanceOf(PromptTooLongError);
    expect(fake.requests).toHaveLength(1);
  });

  it('does not hide a rejected API key behind the fallback model', async () => {
    const failure = errorOf(await collect(createProvider({ ...settings, apiKey: 'sk-wrong' }, deps()).stream(request('hi'), signal)));
    expect(failure.error.status).toBe(401);
    expect(fake.requests).toHaveLength(1);
  });

  it('does not switch models after the primary has started answering', async () => {
    fake.push({ errorMidStream: true, text: 'Half' }, { text: 'unused' });
    const events = await collect(createProvider(settings, deps()).stream(request('hi'), signal));
    expect(textOf(events)).toBe('Half');
    expect(errorOf(events).streamed).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('reports the last model’s error when every model fails', async () => {
    fake.push({ status: 529 }, { status: 529 }, { status: 500 }, { status: 503 });
    const failure = errorOf(await collect(createProvider(settings, deps()).stream(request('hi'), signal)));
    expect(failure.error.status).toBe(503);
    expect(failure.error.retryable).toBe(true);
    expect(fake.requests.map((r) => r.body.model)).toEqual(['claude-opus-4-8', 'claude-opus-4-8', 'claude-haiku-4-5', 'claude-haiku-4-5']);
  });

  it('names the primary model and honours promptCaching: false', async () => {
    const client = createProvider({ ...settings, promptCaching: false }, deps());
    expect([client.provider, client.model]).toEqual(['anthropic', 'claude-opus-4-8']);
    await client.preload();
    fake.push({ text: 'ok' });
    await collect(client.stream(request('hi'), signal));
    expect(JSON.stringify(fake.requests[0]?.body)).not.toContain('cache_control');
  });
});

describe('createProvider with fallback models (OpenAI-compatible)', () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI({ apiKey: 'sk-oa' });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('answers with the fallback model on the same endpoint when the primary keeps failing', async () => {
    const client = createProvider(
      { provider: 'openai', name: 'gpt-5.4', apiKey: 'sk-oa', baseUrl: fake.baseUrl, fallback: ['gpt-4.1-mini'], retry: { maxAttempts: 1 } },
      deps(),
    );
    fake.push({ status: 503 }, { text: 'mini here' });
    const events = await collect(client.stream(request('hi'), signal));
    expect(fake.requests.map((r) => r.body.model)).toEqual(['gpt-5.4', 'gpt-4.1-mini']);
    expect(doneOf(events).model).toBe('gpt-4.1-mini');
  });
});
