import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { checkWindow } from '../../src/cli/doctor-window.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { PromptTooLongError } from '../../src/core/errors.js';
import { createOpenAIProvider } from '../../src/providers/openai.js';
import { discoverWindow } from '../../src/providers/window-discovery.js';
import type { ModelServer, ServedModel } from '../fakes/model-servers.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai.js';
import { collect as collectEvents } from './collect.js';

/**
 * issue 17: with no `model.context_window`, hob asks the server which window it runs (not
 * what the model could do), and `hob doctor` says the figure, where it came from, and how to
 * give the model more when it is below what hob needs.
 */

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function server(kind: ModelServer, contextWindow: number, model: ServedModel): Promise<FakeOpenAI> {
  fake = await startFakeOpenAI({ server: kind, contextWindow, model });
  return fake;
}

const configFor = (baseUrl: string, name: string) => parseHobConfig(`model: { provider: openai, name: "${name}", base_url: "${baseUrl}", api_key: none }\n`, { env: {} });

describe('asking the server for its window', () => {
  it('Ollama: the loaded model\'s context from /api/ps, and what the model could do from /api/show', async () => {
    const ollama = await server('ollama', 8_192, { id: 'llama3.1:latest', modelMax: 131_072 });
    expect(await discoverWindow({ baseUrl: ollama.baseUrl, model: 'llama3.1' })).toMatchObject({ tokens: 8_192, source: 'ollama', modelMax: 131_072 });
    expect(ollama.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/ps', 'POST /api/show']);
  });

  it('Ollama, model not loaded yet: num_ctx of its Modelfile, else Ollama\'s default 4,096', async () => {
    const withNumCtx = await server('ollama', 8_192, { id: 'qwen2.5:7b', loaded: false, numCtx: 12_288, modelMax: 32_768 });
    expect(await discoverWindow({ baseUrl: withNumCtx.baseUrl, model: 'qwen2.5:7b' })).toMatchObject({ tokens: 12_288, source: 'ollama' });
    await withNumCtx.close();
    const plain = await server('ollama', 8_192, { id: 'qwen2.5:7b', loaded: false, modelMax: 32_768 });
    expect(await discoverWindow({ baseUrl: plain.baseUrl, model: 'qwen2.5:7b' })).toMatchObject({ tokens: 4_096, detail: expect.stringContaining("Ollama's default") });
  });

  it('llama.cpp: n_ctx from /props', async () => {
    const llama = await server('llama.cpp', 16_384, { id: 'gemma' });
    expect(await discoverWindow({ baseUrl: llama.baseUrl, model: 'gemma' })).toMatchObject({ tokens: 16_384, source: 'llama.cpp' });
  });

  it('vLLM: max_model_len from /v1/models', async () => {
    const vllm = await server('vllm', 32_768, { id: 'Qwen/Qwen2.5-7B-Instruct' });
    expect(await discoverWindow({ baseUrl: vllm.baseUrl, model: 'Qwen/Qwen2.5-7B-Instruct' })).toMatchObject({ tokens: 32_768, source: 'vllm' });
  });

  it('LM Studio: the loaded context length from /api/v0/models, else its default 4,096', async () => {
    const loaded = await server('lm-studio', 24_000, { id: 'meta-llama-3.1-8b-instruct', modelMax: 131_072 });
    expect(await discoverWindow({ baseUrl: loaded.baseUrl, model: 'meta-llama-3.1-8b-instruct' })).toMatchObject({ tokens: 24_000, source: 'lm-studio', modelMax: 131_072 });
    await loaded.close();
    const idle = await server('lm-studio', 24_000, { id: 'meta-llama-3.1-8b-instruct', loaded: false, modelMax: 131_072 });
    expect(await discoverWindow({ baseUrl: idle.baseUrl, model: 'meta-llama-3.1-8b-instruct' })).toMatchObject({ tokens: 4_096, source: 'lm-studio' });
  });

  it('OpenRouter: context_length from /api/v1/models, what its provider serves when that is less', async () => {
    const router = await server('openrouter', 65_536, { id: 'meta-llama/llama-3.1-70b-instruct', modelMax: 131_072 });
    expect(await discoverWindow({ baseUrl: router.baseUrl, model: 'meta-llama/llama-3.1-70b-instruct' })).toMatchObject({ tokens: 65_536, source: 'openrouter' });
  });

  it('a server that answers none of these: nothing, so the default stands', async () => {
    const plain = await server('openai', 8_192, { id: 'x' });
    expect(await discoverWindow({ baseUrl: plain.baseUrl, model: 'some-model' })).toBeUndefined();
  });
});

describe('hob doctor: the window', () => {
  it('prints the window and where it came from, for each server', async () => {
    const cases: Array<[ModelServer, string, RegExp]> = [
      ['ollama', 'llama3.1', /^32,768 tokens for llama3\.1, from Ollama \/api\/ps \(the loaded model\); the model itself can read 131,072 tokens/],
      ['llama.cpp', 'gemma', /^32,768 tokens for gemma, from llama\.cpp server \/props \(n_ctx\)$/],
      ['vllm', 'qwen', /^32,768 tokens for qwen, from vLLM \/v1\/models \(max_model_len\)$/],
      ['lm-studio', 'phi-4', /^32,768 tokens for phi-4, from LM Studio \/api\/v0\/models \(the loaded model\); the model itself can read 131,072 tokens/],
      ['openrouter', 'mistral/small', /^32,768 tokens for mistral\/small, from OpenRouter \/api\/v1\/models \(context_length\)/],
    ];
    for (const [kind, model, detail] of cases) {
      const running = await server(kind, 32_768, { id: kind === 'ollama' ? `${model}:latest` : model, modelMax: kind === 'openrouter' ? 32_768 : 131_072 });
      const check = await checkWindow(configFor(running.baseUrl, model));
      expect(check, kind).toMatchObject({ name: 'context window', ok: true, detail: expect.stringMatching(detail) });
      expect(check.warn, kind).toBeUndefined();
      await running.close();
    }
    expect((await checkWindow(parseHobConfig('model: { context_window: 16000 }\n', { env: {} }))).detail).toBe('16,000 tokens for claude-sonnet-4-6, from model.context_window');
    expect((await checkWindow(parseHobConfig('model: {}\n', { env: {} }))).detail).toBe("200,000 tokens for claude-sonnet-4-6, from hob's table of known models");
  });

  it('warns, with the fix, when Ollama runs the model with a num_ctx below what hob needs', async () => {
    const ollama = await server('ollama', 4_096, { id: 'llama3.1:latest', modelMax: 131_072 });
    const check = await checkWindow(configFor(ollama.baseUrl, 'llama3.1'));
    expect(check).toMatchObject({ ok: true, warn: true });
    expect(check.detail).toContain('4,096 tokens for llama3.1, from Ollama /api/ps (the loaded model); the model itself can read 131,072 tokens.');
    expect(check.detail).toContain('below the 8,192 tokens hob needs');
    expect(check.detail).toContain('OLLAMA_CONTEXT_LENGTH=16384');
    expect(check.detail).toContain('PARAMETER num_ctx 16384');
  });

  it('names llama.cpp\'s --ctx-size when its server runs too small a window', async () => {
    const llama = await server('llama.cpp', 2_048, { id: 'gemma' });
    expect((await checkWindow(configFor(llama.baseUrl, 'gemma'))).detail).toContain('--ctx-size 16384');
  });
});

describe('the figures in a refusal', () => {
  it('are read from each server\'s words, so compaction aims below the server\'s own count', async () => {
    const cases: Array<[ModelServer, { promptTokens?: number; contextWindow?: number }]> = [
      ['openai', { contextWindow: 1_000 }],
      ['vllm', { contextWindow: 1_000 }],
      ['llama.cpp', { contextWindow: 1_000 }],
      ['lm-studio', { contextWindow: 1_000 }],
      ['openrouter', { contextWindow: 1_000 }],
    ];
    const prompt = 'word '.repeat(2_000);
    for (const [kind, expected] of cases) {
      const running = await server(kind, 1_000, { id: 'm' });
      const provider = createOpenAIProvider({ apiKey: 'none', baseUrl: running.baseUrl, model: 'm' });
      const events = await collectEvents(provider.stream({ system: '', messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }], tools: [], maxTokens: 100 }, new AbortController().signal));
      const failure = events.find((event) => event.type === 'error');
      expect(failure?.type === 'error' && failure.error, kind).toBeInstanceOf(PromptTooLongError);
      const figures = failure?.type === 'error' && failure.error instanceof PromptTooLongError ? failure.error.figures : {};
      expect(figures, kind).toMatchObject(expected);
      expect(figures.promptTokens, kind).toBeGreaterThan(2_000);
      await running.close();
    }
  });
});
