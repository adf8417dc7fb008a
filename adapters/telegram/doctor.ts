/** `hob doctor` for Telegram: the token names a bot (getMe) at the configured Bot API root. */
import type { Check } from '../../src/core/check.js';
import { errorMessage } from '../../src/core/errors.js';
import type { ChannelDoctorContext } from '../../src/gateway/channel-module.js';

export async function checkTelegram(apiRoot: string, token: string, context: ChannelDoctorContext): Promise<Check> {
  try {
    const response = await context.fetch(`${apiRoot}/bot${token}/getMe`, { signal: AbortSignal.timeout(10_000) });
    const body = (await response.json()) as { ok: boolean; result?: { username?: string }; description?: string };
    if (body.ok) return { name: 'telegram', ok: true, detail: `token ${context.mask(token)} is @${body.result?.username}` };
    return { name: 'telegram', ok: false, detail: `getMe failed: ${body.description ?? response.status}; check channels.telegram.token (from @BotFather)` };
  } catch (error) {
    return { name: 'telegram', ok: false, detail: `${apiRoot} unreachable: ${errorMessage(error)}; check channels.telegram.api_root` };
  }
}
