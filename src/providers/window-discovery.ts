/**
 * Asks an OpenAI-compatible server which window it runs the model with, preferring what the
 * server really runs over what the model could do: Ollama (`/api/ps` for a loaded model, else
 * `/api/show`), llama.cpp's server (`/props`), LM Studio (`/api/v0/models`), vLLM
 * (`/v1/models`), OpenRouter (`/api/v1/models`). Each probe is one GET (or Ollama's POST) with
 * a short timeout; a server that is none of these answers 404 and the next probe runs.
 */
import type { WindowInfo } from './context-window.js';

export type DiscoveryTarget = {
  /** The configured base URL (OpenAI-compatible: including /v1). */
  baseUrl: string;
  model: string;
  apiKey?: string;
};

export type DiscoveryOptions = {
  fetch?: typeof globalThis.fetch;
  /** Per probe. */
  timeoutMs?: number;
};

/** What Ollama runs a model with when neither the Modelfile nor the server sets num_ctx (below 24 GiB of VRAM). */
const OLLAMA_DEFAULT = 4_096;
/** What LM Studio loads a model with on demand, unless told otherwise. */
const LM_STUDIO_DEFAULT = 4_096;

export const WINDOW_FIXES = {
  ollama: 'start Ollama with OLLAMA_CONTEXT_LENGTH=16384 (or more), or build the model with a Modelfile line "PARAMETER num_ctx 16384" (ollama create)',
  'llama.cpp': 'start llama-server with --ctx-size 16384 (or more)',
  vllm: 'start vLLM with --max-model-len 16384 (or more)',
  'lm-studio': 'load the model with a larger context length (lms load MODEL --context-length 16384, or in the app)',
  openrouter: 'choose a model with a larger context length',
} as const;

type Json = Record<string, unknown>;
type Probe = (target: DiscoveryTarget, get: Getter) => Promise<WindowInfo | undefined>;
type Getter = (url: string, body?: Json) => Promise<Json | undefined>;

/** The server's window for the model, or undefined when no probe recognized the server. Never throws. */
export async function discoverWindow(target: DiscoveryTarget, options: DiscoveryOptions = {}): Promise<WindowInfo | undefined> {
  let origin: string;
  try {
    origin = new URL(target.baseUrl).origin;
  } catch {
    return undefined;
  }
  const get = getter(target, options);
  // OpenRouter's own host needs no guessing; a proxy in front of it is found last.
  const probes: Probe[] = new URL(origin).hostname.endsWith('openrouter.ai') ? [openRouter] : [ollama, llamaCpp, lmStudio, vllm, openRouter];
  for (const probe of probes) {
    const found = await probe(target, (path, body) => get(path.startsWith('/v1/') ? `${target.baseUrl.replace(/\/+$/, '')}${path.slice(3)}` : `${origin}${path}`, body));
    if (found) return found;
  }
  return undefined;
}

function getter(target: DiscoveryTarget, options: DiscoveryOptions): Getter {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  return async (url, body) => {
    try {
      const response = await fetchImpl(url, {
        method: body ? 'POST' : 'GET',
        headers: { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(options.timeoutMs ?? 2_000),
      });
      if (!response.ok) return undefined;
      const parsed: unknown = await response.json();
      return isObject(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  };
}

const ollama: Probe = async ({ model }, get) => {
  const running = await get('/api/ps');
  if (!running || !Array.isArray(running.models)) return undefined;
  const named = (entry: unknown) => isObject(entry) && [entry.name, entry.model].some((name) => sameOllamaModel(name, model));
  const loaded = running.models.find(named);
  const shown = await get('/api/show', { model });
  const modelMax = shown ? ollamaModelLength(shown) : undefined;
  const fix = WINDOW_FIXES.ollama;
  const loadedLength = isObject(loaded) ? positive(loaded.context_length) : undefined;
  if (loadedLength) return { tokens: loadedLength, source: 'ollama', detail: 'Ollama /api/ps (the loaded model)', ...(modelMax ? { modelMax } : {}), fix };
  if (!shown) return undefined;
  const numCtx = positive(/(?:^|\n)\s*num_ctx\s+(\d+)/.exec(typeof shown.parameters === 'string' ? shown.parameters : '')?.[1]);
  const tokens = Math.min(numCtx ?? OLLAMA_DEFAULT, modelMax ?? Number.POSITIVE_INFINITY);
  const detail = numCtx ? 'Ollama /api/show (num_ctx of the model, not loaded yet)' : `Ollama /api/show (not loaded yet, no num_ctx: Ollama's default ${OLLAMA_DEFAULT.toLocaleString('en-US')} assumed)`;
  return { tokens, source: 'ollama', detail, ...(modelMax ? { modelMax } : {}), fix };
};

/** "llama3.1" on the command line is "llama3.1:latest" in Ollama's lists. */
function sameOllamaModel(name: unknown, model: string): boolean {
  if (typeof name !== 'string') return false;
  const tagged = (value: string) => (value.includes(':') ? value : `${value}:latest`);
  return tagged(name) === tagged(model);
}

/** `model_info["<architecture>.context_length"]`: what the model was trained for. */
function ollamaModelLength(shown: Json): number | undefined {
  const info = isObject(shown.model_info) ? shown.model_info : {};
  const architecture = typeof info['general.architecture'] === 'string' ? info['general.architecture'] : undefined;
  const key = architecture ? `${architecture}.context_length` : Object.keys(info).find((name) => name.endsWith('.context_length'));
  return key ? positive(info[key]) : undefined;
}

const llamaCpp: Probe = async (_target, get) => {
  const props = await get('/props');
  if (!props) return undefined;
  const settings = isObject(props.default_generation_settings) ? props.default_generation_settings : {};
  const tokens = positive(settings.n_ctx) ?? positive(props.n_ctx);
  return tokens ? { tokens, source: 'llama.cpp', detail: 'llama.cpp server /props (n_ctx)', fix: WINDOW_FIXES['llama.cpp'] } : undefined;
};

const lmStudio: Probe = async ({ model }, get) => {
  const listed = await get('/api/v0/models');
  const entry = Array.isArray(listed?.data) ? listed.data.find((item) => isObject(item) && item.id === model) : undefined;
  if (!isObject(entry)) return undefined;
  const modelMax = positive(entry.max_context_length);
  const loaded = entry.state === 'loaded' ? positive(entry.loaded_context_length) : undefined;
  const fix = WINDOW_FIXES['lm-studio'];
  if (loaded) return { tokens: loaded, source: 'lm-studio', detail: 'LM Studio /api/v0/models (the loaded model)', ...(modelMax ? { modelMax } : {}), fix };
  if (!modelMax) return undefined;
  const tokens = Math.min(LM_STUDIO_DEFAULT, modelMax);
  return { tokens, source: 'lm-studio', detail: `LM Studio /api/v0/models (not loaded yet: its default ${LM_STUDIO_DEFAULT.toLocaleString('en-US')} assumed)`, modelMax, fix };
};

const vllm: Probe = async ({ model }, get) => {
  const listed = await get('/v1/models');
  const entry = Array.isArray(listed?.data) ? listed.data.find((item) => isObject(item) && item.id === model) : undefined;
  const tokens = isObject(entry) ? positive(entry.max_model_len) : undefined;
  return tokens ? { tokens, source: 'vllm', detail: 'vLLM /v1/models (max_model_len)', fix: WINDOW_FIXES.vllm } : undefined;
};

const openRouter: Probe = async ({ model }, get) => {
  const listed = await get('/api/v1/models');
  const entry = Array.isArray(listed?.data) ? listed.data.find((item) => isObject(item) && item.id === model) : undefined;
  if (!isObject(entry)) return undefined;
  const modelMax = positive(entry.context_length);
  // What the provider OpenRouter routes to serves can be less than the model's own length.
  const served = isObject(entry.top_provider) ? positive(entry.top_provider.context_length) : undefined;
  const tokens = served && modelMax ? Math.min(served, modelMax) : (served ?? modelMax);
  return tokens ? { tokens, source: 'openrouter', detail: 'OpenRouter /api/v1/models (context_length)', fix: WINDOW_FIXES.openrouter } : undefined;
};

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positive(value: unknown): number | undefined {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number > 0 ? number : undefined;
}
