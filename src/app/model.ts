import type { HobConfig } from '../config/schema.js';
import { requireModelKey } from '../config/load.js';
import { ModelWindow } from '../engine/model-window.js';
import { createProvider, type ProviderSettings } from '../providers/index.js';
import type { WindowInfo } from '../providers/context-window.js';
import type { ProviderClient } from '../providers/types.js';

/** The model a hob talks to: its client, the window it has, and switching it (`/model`). */
export type AppModel = {
  /** The client new requests start with (the engine's deps carry the current one). */
  provider: ProviderClient;
  windows: ModelWindow;
  /** Loads the model SDK in the background; a load failure surfaces on the first request, in words. */
  preload(): void;
  /** A client for another model of the same server, its SDK loading in the background; undefined when the model is fixed. */
  switchTo(name: string): ProviderClient | undefined;
};

/**
 * `fixed` is a model tests hand in: it is never replaced and has no SDK to load. Otherwise
 * the client is built from `model:` in the config (its key required here, so a missing key
 * stops start-up with the config path named).
 */
export function createAppModel(config: HobConfig, configPath: string | undefined, fixed: ProviderClient | undefined): AppModel {
  const client = fixed ? undefined : createProvider(providerSettings(config, configPath));
  return {
    provider: fixed ?? (client as ProviderClient),
    windows: new ModelWindow({ configured: config.model.context_window, discover: (model) => discoverWindowOf(config, model, configPath) }),
    preload: () => void client?.preload().catch(() => undefined),
    switchTo: (name) => {
      if (fixed) return undefined;
      const next = createProvider({ ...providerSettings(config, configPath), name });
      void next.preload().catch(() => undefined);
      return next;
    },
  };
}

/** Asks the model's server for its window (hosted APIs have no such endpoint: their models are known). */
async function discoverWindowOf(config: HobConfig, model: string, configPath: string | undefined): Promise<WindowInfo | undefined> {
  const official = /(^|\.)(api\.openai\.com|api\.anthropic\.com)$/.test(new URL(config.model.base_url).hostname);
  if (official) return undefined;
  const { discoverWindow } = await import('../providers/window-discovery.js');
  return discoverWindow({ baseUrl: config.model.base_url, model, apiKey: requireModelKey(config, configPath) });
}

function providerSettings(config: HobConfig, configPath: string | undefined): ProviderSettings {
  return {
    provider: config.model.provider,
    name: config.model.name,
    apiKey: requireModelKey(config, configPath),
    baseUrl: config.model.base_url,
    promptCaching: config.model.prompt_caching,
    fallback: config.model.fallback,
    retry: {
      maxAttempts: config.model.retry.max_attempts,
      baseDelayMs: config.model.retry.base_delay_ms,
      maxDelayMs: config.model.retry.max_delay_ms,
    },
  };
}
