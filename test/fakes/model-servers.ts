/**
 * What sets the OpenAI-compatible servers apart, for the OpenAI fake (openai.ts): how each
 * refuses a prompt over its window (or, Ollama, silently cuts it), and the endpoints hob asks
 * for the window: Ollama `/api/ps` + `/api/show`, llama.cpp `/props`, vLLM `/v1/models`,
 * LM Studio `/api/v0/models`, OpenRouter `/api/v1/models`. The shapes follow each server's
 * documentation; only the fields hob reads, and a few around them, are filled in.
 */
import type { ExtraRoutes } from './scripted-http.js';

export type ModelServer = 'openai' | 'ollama' | 'llama.cpp' | 'vllm' | 'lm-studio' | 'openrouter';

export type ServedModel = {
  /** The name the server lists and answers to. */
  id: string;
  /** Ollama, LM Studio: loaded now (its window is then reported as loaded). Default true. */
  loaded?: boolean;
  /** What the model itself could read (Ollama's model_info, LM Studio's max, OpenRouter's length). */
  modelMax?: number;
  /** Ollama: `PARAMETER num_ctx` of the Modelfile, shown by /api/show. */
  numCtx?: number;
};

/** The prompt's tokens as these fakes count them: characters of what the model reads, over four. */
export function promptTokens(body: { system?: unknown; messages?: unknown; tools?: unknown }): number {
  const chars = [body.system, body.messages, body.tools].reduce<number>((sum, part) => sum + (part === undefined ? 0 : JSON.stringify(part).length), 0);
  return Math.ceil(chars / 4);
}

/** Servers that refuse a prompt whose prompt plus max_tokens exceeds the window (the others look at the prompt alone). */
const COUNTS_ANSWER = new Set<ModelServer>(['vllm', 'llama.cpp', 'openrouter']);

export type Overflow = { kind: 'refuse'; status: number; body: unknown } | { kind: 'truncate' } | undefined;

/** What `server` does with a prompt of `prompt` tokens asking for `maxTokens` in a `window`. */
export function overflow(server: ModelServer, prompt: number, maxTokens: number, window: number): Overflow {
  const total = prompt + maxTokens;
  if (COUNTS_ANSWER.has(server) ? total <= window : prompt <= window) return undefined;
  switch (server) {
    case 'ollama':
      return { kind: 'truncate' };
    case 'vllm':
      // vLLM's classic error body: flat, not under "error".
      return {
        kind: 'refuse',
        status: 400,
        body: { object: 'error', message: `This model's maximum context length is ${window} tokens. However, you requested ${total} tokens (${prompt} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`, type: 'BadRequestError', param: null, code: 400 },
      };
    case 'llama.cpp':
      return { kind: 'refuse', status: 400, body: { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: prompt, n_ctx: window } } };
    case 'lm-studio':
      return { kind: 'refuse', status: 400, body: { error: `Trying to keep the first ${prompt} tokens when context the overflows. However, the model is loaded with context length of only ${window} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input` } };
    case 'openrouter':
      return { kind: 'refuse', status: 400, body: { error: { message: `This endpoint's maximum context length is ${window} tokens. However, you requested about ${total} tokens (${prompt} of text input, ${maxTokens} in the output). Please reduce the length of either one.`, code: 400 } } };
    case 'openai':
      return {
        kind: 'refuse',
        status: 400,
        body: { error: { message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
      };
  }
}

/** The endpoints `server` answers besides chat completions, reporting the window it runs now for `model`. */
export function discoveryRoutes<Body>(server: ModelServer, windowNow: () => number, model: ServedModel): ExtraRoutes<Body> {
  const loaded = model.loaded ?? true;
  switch (server) {
    case 'ollama':
      return {
        'GET /api/ps': () => ({
          status: 200,
          body: { models: loaded ? [{ name: tagged(model.id), model: tagged(model.id), size: 6591830464, digest: 'a2af6cc3', details: { format: 'gguf', family: 'llama' }, expires_at: '2026-12-01T12:00:00Z', size_vram: 5333539264, context_length: windowNow() }] : [] },
        }),
        'POST /api/show': (request) => {
          const asked = (request.body as { model?: string }).model ?? '';
          if (tagged(asked) !== tagged(model.id)) return { status: 404, body: { error: `model '${asked}' not found` } };
          const parameters = model.numCtx ? `num_ctx                        ${model.numCtx}\nstop                           "<|eot_id|>"` : 'stop                           "<|eot_id|>"';
          return { status: 200, body: { modelfile: '# Modelfile', parameters, template: '{{ .Prompt }}', details: { format: 'gguf', family: 'llama' }, model_info: { 'general.architecture': 'llama', 'llama.context_length': model.modelMax ?? 131_072 } } };
        },
      };
    case 'llama.cpp':
      return { 'GET /props': () => ({ status: 200, body: { default_generation_settings: { n_ctx: windowNow(), n_predict: -1, temperature: 0.8 }, total_slots: 1, model_path: `/models/${model.id}.gguf` } }) };
    case 'vllm':
      return { 'GET /v1/models': () => ({ status: 200, body: { object: 'list', data: [{ id: model.id, object: 'model', owned_by: 'vllm', root: model.id, max_model_len: windowNow() }] } }) };
    case 'lm-studio':
      return {
        'GET /api/v0/models': () => ({
          status: 200,
          body: {
            object: 'list',
            data: [{ id: model.id, object: 'model', type: 'llm', arch: 'llama', quantization: 'Q4_K_M', state: loaded ? 'loaded' : 'not-loaded', max_context_length: model.modelMax ?? 131_072, ...(loaded ? { loaded_context_length: windowNow() } : {}) }],
          },
        }),
      };
    case 'openrouter':
      return { 'GET /api/v1/models': () => ({ status: 200, body: { data: [{ id: model.id, name: model.id, context_length: model.modelMax ?? windowNow(), top_provider: { context_length: windowNow(), max_completion_tokens: 4_096 } }] } }) };
    case 'openai':
      return {};
  }
}

const tagged = (name: string): string => (name.includes(':') ? name : `${name}:latest`);
