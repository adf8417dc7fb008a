/**
 * Builds the model client hob runs on: SDK client → retries → fallback models.
 * The SDK module is imported on first use (or on `preload()`), never at start-up:
 * @anthropic-ai/sdk alone takes ~250 ms to load.
 */
import { ProviderError } from '../core/errors.js';
import { withFallback, withModel } from './fallback.js';
import { withRetries, type RetryOptions } from './retry.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from './types.js';

export type ProviderSettings = {
  provider: 'anthropic' | 'openai';
  /** Model name, e.g. claude-sonnet-4-6 or gpt-4.1. */
  name: string;
  apiKey: string;
  /** Anthropic: the origin (https://api.anthropic.com). OpenAI: including /v1. */
  baseUrl?: string;
  /** Anthropic only; default true. */
  promptCaching?: boolean;
  /** Models tried in order when the primary stays unavailable; same endpoint and key. */
  fallback?: string[];
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
};

/** Seams for tests and embedding; production passes none. */
export type ProviderDeps = {
  fetch?: typeof globalThis.fetch;
  sleep?: RetryOptions['sleep'];
  random?: RetryOptions['random'];
};

export type ModelClient = ProviderClient & {
  /** Loads the SDK now (e.g. once the gateway is up) so the first reply does not wait for it. */
  preload(): Promise<void>;
};

export function createProvider(settings: ProviderSettings, deps: ProviderDeps = {}): ModelClient {
  let loading: Promise<ProviderClient> | undefined;
  const load = (): Promise<ProviderClient> => {
    loading ??= loadClient(settings, deps).catch((error: unknown) => {
      loading = undefined; // let the next call try again
      throw error;
    });
    return loading;
  };

  const base: ProviderClient = {
    provider: settings.provider,
    model: settings.name,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      let client: ProviderClient;
      try {
        client = await load();
      } catch (cause) {
        const error = new ProviderError(`could not start the ${settings.provider} client: ${String(cause)}`, { retryable: false, cause });
        yield { type: 'error', error, streamed: false };
        return;
      }
      yield* client.stream(request, signal);
    },
  };

  const retry: RetryOptions = { ...settings.retry, sleep: deps.sleep, random: deps.random };
  const fallbacks = (settings.fallback ?? []).filter((name) => name !== settings.name);
  const client = withFallback(
    withRetries(base, retry),
    fallbacks.map((name) => withRetries(withModel(base, name), retry)),
  );
  return {
    provider: client.provider,
    model: client.model,
    stream: (request, signal) => client.stream(request, signal),
    preload: async () => {
      await load();
    },
  };
}

/**
 * Starts loading the module of `provider` (with the OpenAI SDK; Anthropic's makes its call
 * itself) before any client is made (`hob start` does, beside loading the rest of hob): a client
 * made later finds it loaded. Never rejects (a failure shows
 * on the client's first request).
 */
export function preloadSdk(provider: ProviderSettings['provider']): Promise<void> {
  return (provider === 'openai' ? import('./openai.js') : import('./anthropic.js')).then(
    () => undefined,
    () => undefined,
  );
}

async function loadClient(settings: ProviderSettings, deps: ProviderDeps): Promise<ProviderClient> {
  const common = { apiKey: settings.apiKey, baseUrl: settings.baseUrl, model: settings.name, fetch: deps.fetch };
  switch (settings.provider) {
    case 'anthropic': {
      const { createAnthropicProvider } = await import('./anthropic.js');
      return createAnthropicProvider({ ...common, promptCaching: settings.promptCaching ?? true });
    }
    case 'openai': {
      const { createOpenAIProvider } = await import('./openai.js');
      return createOpenAIProvider(common);
    }
    default: {
      const unknown: never = settings.provider;
      throw new Error(`unknown provider ${String(unknown)}`);
    }
  }
}
