/**
 * `hob doctor`'s window line: how many tokens the model reads, where that figure came from,
 * and a warning with the fix when the server runs a window below what hob needs.
 */
import type { HobConfig } from '../config/schema.js';
import { staticWindow, type WindowInfo } from '../providers/context-window.js';
import { NEEDED_WINDOW } from '../engine/prompt-budget.js';
import type { Check } from '../core/check.js';

const tokens = (value: number): string => `${value.toLocaleString('en-US')} tokens`;

export async function checkWindow(config: HobConfig, fetchImpl?: typeof fetch): Promise<Check> {
  const model = config.model.name;
  let info: WindowInfo = staticWindow(model, config.model.context_window);
  if (info.source === 'default' && !/(^|\.)(api\.openai\.com|api\.anthropic\.com)$/.test(new URL(config.model.base_url).hostname)) {
    const { discoverWindow } = await import('../providers/window-discovery.js');
    info = (await discoverWindow({ baseUrl: config.model.base_url, model, apiKey: config.model.api_key }, { fetch: fetchImpl })) ?? info;
  }
  const could = info.modelMax && info.modelMax > info.tokens ? `; the model itself can read ${tokens(info.modelMax)}` : '';
  const detail = `${tokens(info.tokens)} for ${model}, from ${info.detail}${could}`;
  if (info.tokens >= NEEDED_WINDOW) return { name: 'context window', ok: true, detail: could && info.fix ? `${detail} (to use more: ${info.fix})` : detail };
  const fix = info.fix ?? 'give the model a larger window on its server, then set model.context_window to match';
  return {
    name: 'context window',
    ok: true,
    warn: true,
    detail: `${detail}. That is below the ${tokens(NEEDED_WINDOW)} hob needs to hold a conversation (it still answers, with a lean prompt, but compacts every turn or two). Fix: ${fix}.`,
  };
}
