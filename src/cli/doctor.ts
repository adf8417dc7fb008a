import type { HobConfig } from '../config/schema.js';
import { MODEL_KEY_ENV } from '../config/schema.js';
import type { Check } from '../core/check.js';
import { systemClock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { maskSecret } from '../logger.js';
import { embeddingsClient } from '../memory/embeddings.js';
import { createSandbox } from '../policy/sandbox.js';
import { createProvider } from '../providers/index.js';
import { openStore } from '../store/open.js';
import { checkVoice } from '../voice/doctor.js';
import { homedir } from 'node:os';
import { configuredChannels } from '../app/channels.js';
import { checkWindow } from './doctor-window.js';

/** `hob doctor`: the config loads, the model endpoint answers the key, each chat token works. */
export async function runDoctor(config: HobConfig, configPath: string | undefined, fetchImpl: typeof fetch = fetch): Promise<Check[]> {
  const checks: Check[] = [{ name: 'config', ok: true, detail: configPath ?? 'no file: using defaults' }];
  const key = config.model.api_key;
  if (!key) {
    checks.push({ name: 'model key', ok: false, detail: `not set: set ${MODEL_KEY_ENV[config.model.provider]} or model.api_key` });
  } else {
    checks.push(await checkModel(config, key));
  }
  // issue 7: whether bash runs inside bubblewrap.
  const sandbox = createSandbox({ settings: config.permissions.sandbox, workspace: config.tools.workspace, home: homedir() });
  checks.push({ name: 'sandbox', ok: sandbox.status().state !== 'refused', detail: sandbox.describe() });
  // issue 17: the window, where it came from, and whether it is enough.
  checks.push(await checkWindow(config, fetchImpl));
  for (const { module, section } of configuredChannels(config)) {
    checks.push(...(await module.doctor(section, { fetch: fetchImpl, mask: maskSecret })));
  }
  checks.push(checkStore(config));
  checks.push(await checkEmbeddings(config));
  // issue 22: voice notes (endpoint and key), spoken answers, ffmpeg.
  checks.push(...(await checkVoice(config.voice, { mask: maskSecret })));
  return checks;
}

/**
 * The store: which one, where (never the password), and how it keeps memory vectors. Opening
 * it also applies any schema migration waiting, as `hob start` would.
 */
function checkStore(config: HobConfig): Check {
  const where = config.store.kind === 'postgres' ? 'PostgreSQL' : 'SQLite';
  try {
    const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock: systemClock });
    try {
      const vectors = store.vectorSupport();
      const detail = vectors.mode === 'none' ? `no vectors here (${vectors.problem})` : `vectors: ${vectors.description}`;
      return { name: 'store', ok: true, detail: `${where} at ${store.location}; ${detail}` };
    } finally {
      store.close();
    }
  } catch (error) {
    return { name: 'store', ok: false, detail: `${where}: ${errorMessage(error)}` };
  }
}

/** Semantic memory search: configured or not, and whether the endpoint answers. */
async function checkEmbeddings(config: HobConfig): Promise<Check> {
  const settings = config.memory.embeddings;
  if (!settings) return { name: 'semantic search', ok: true, detail: 'not configured: memory search is full-text only (set memory.embeddings to add semantic search)' };
  const where = `${settings.base_url} (${settings.model})`;
  try {
    const [vector] = await embeddingsClient({ baseUrl: settings.base_url, model: settings.model, apiKey: settings.api_key })(['ping'], AbortSignal.timeout(20_000));
    return { name: 'semantic search', ok: true, detail: `configured: ${where} gives ${vector?.length ?? 0}-dimension vectors` };
  } catch (error) {
    return { name: 'semantic search', ok: false, detail: `${where} failed: ${errorMessage(error)}; check memory.embeddings (base_url, model, api_key)` };
  }
}

/** One tiny request through hob's own provider client: proves the endpoint, the key and the model name. */
async function checkModel(config: HobConfig, key: string): Promise<Check> {
  const client = createProvider({ provider: config.model.provider, name: config.model.name, apiKey: key, baseUrl: config.model.base_url, retry: { maxAttempts: 1 } });
  const where = `${config.model.base_url} (${config.model.name})`;
  const request = { system: 'Reply with the word ok.', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'ping' }] }], tools: [], maxTokens: 5 };
  for await (const event of client.stream(request, AbortSignal.timeout(20_000))) {
    if (event.type === 'done') return { name: 'model endpoint', ok: true, detail: `${where} answered with key ${maskSecret(key)}` };
    if (event.type === 'error') {
      const status = event.error.status;
      const hint = status === 401 || status === 403 ? 'check model.api_key' : status === 404 ? 'check model.name and model.base_url' : 'check model.base_url';
      return { name: 'model endpoint', ok: false, detail: `${where} failed: ${event.error.message}; ${hint}` };
    }
  }
  return { name: 'model endpoint', ok: false, detail: `${where} ended without an answer` };
}
