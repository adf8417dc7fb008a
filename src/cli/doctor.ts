import type { HobConfig } from '../config/schema.js';
import { MODEL_KEY_ENV } from '../config/schema.js';
import { errorMessage } from '../core/errors.js';
import { maskSecret } from '../logger.js';

type Check = { name: string; ok: boolean; detail: string };

/** `hob doctor`: the config loads, the model endpoint answers the key, each chat token works. */
export async function runDoctor(config: HobConfig, configPath: string | undefined, fetchImpl: typeof fetch = fetch): Promise<Check[]> {
  const checks: Check[] = [{ name: 'config', ok: true, detail: configPath ?? 'no file: using defaults' }];
  const key = config.model.api_key;
  if (!key) {
    checks.push({ name: 'model key', ok: false, detail: `not set: set ${MODEL_KEY_ENV[config.model.provider]} or model.api_key` });
  } else {
    checks.push(await checkModel(config, key, fetchImpl));
  }
  const telegram = config.channels.telegram;
  if (telegram) checks.push(await checkTelegram(telegram.api_root, telegram.token, fetchImpl));
  return checks;
}

async function checkModel(config: HobConfig, key: string, fetchImpl: typeof fetch): Promise<Check> {
  const base = config.model.base_url.replace(/\/+$/, '');
  const anthropic = config.model.provider === 'anthropic';
  const url = anthropic ? `${base}/v1/models` : `${base}/models`;
  const headers: Record<string, string> = anthropic ? { 'x-api-key': key, 'anthropic-version': '2023-06-01', authorization: `Bearer ${key}` } : { authorization: `Bearer ${key}` };
  try {
    const response = await fetchImpl(url, { headers, signal: AbortSignal.timeout(10_000) });
    if (response.ok) return { name: 'model endpoint', ok: true, detail: `${url} accepted key ${maskSecret(key)} (model ${config.model.name})` };
    if (response.status === 401 || response.status === 403) return { name: 'model endpoint', ok: false, detail: `${url} rejected key ${maskSecret(key)} (HTTP ${response.status}): check model.api_key` };
    return { name: 'model endpoint', ok: false, detail: `${url} answered HTTP ${response.status}` };
  } catch (error) {
    return { name: 'model endpoint', ok: false, detail: `${url} unreachable: ${errorMessage(error)}; check model.base_url` };
  }
}

async function checkTelegram(apiRoot: string, token: string, fetchImpl: typeof fetch): Promise<Check> {
  try {
    const response = await fetchImpl(`${apiRoot}/bot${token}/getMe`, { signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { ok: boolean; result?: { username?: string }; description?: string };
    if (body.ok) return { name: 'telegram', ok: true, detail: `token ${maskSecret(token)} is @${body.result?.username}` };
    return { name: 'telegram', ok: false, detail: `getMe failed: ${body.description ?? response.status}; check channels.telegram.token (from @BotFather)` };
  } catch (error) {
    return { name: 'telegram', ok: false, detail: `${apiRoot} unreachable: ${errorMessage(error)}; check channels.telegram.api_root` };
  }
}
