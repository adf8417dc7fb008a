/**
 * Telegram as hob sees it: its config section, who may talk to hob there, how to create the
 * adapter (grammy loads only then) and its doctor check. Listed once in adapters/index.ts.
 */
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { TELEGRAM_CAPABILITIES } from './capabilities.js';
import { telegramConfigSchema, type TelegramConfig } from './config.js';

export type { TelegramConfig };

/** A bot token's part before the colon is the bot's id (public: it is in every update the bot sends). */
function botIdOf(token: string): string {
  return token.split(':')[0] ?? token;
}

export const telegramChannel: ChannelModule<TelegramConfig> = {
  name: 'telegram',
  label: 'Telegram',
  configSchema: telegramConfigSchema,
  capabilities: TELEGRAM_CAPABILITIES,
  secretEnv: ['TELEGRAM_*'],
  access: (config) => ({ allowFrom: config.allow_from, allowedGroups: config.allowed_groups }),
  // Telegram hands each update to one getUpdates caller and cuts off a second poller (409):
  // several processes need the webhook, where any of them may take an update.
  singleConsumer: (config) =>
    config.webhook
      ? undefined
      : {
          key: `telegram-polling:${botIdOf(config.token)}`,
          refusal: `Telegram: another hob process already long-polls this bot (${botIdOf(config.token)}), and Telegram serves one poller per bot. Run every process in webhook mode (set channels.telegram.webhook with a URL your load balancer forwards to each process), or start only one process with this channel.`,
        },
  async create(config, context) {
    const { createTelegramAdapter } = await import('./telegram-adapter.js');
    const webhook = config.webhook;
    return createTelegramAdapter({
      token: config.token,
      apiRoot: config.api_root,
      webhook: webhook ? { url: webhook.url, secretToken: webhook.secret_token, port: webhook.port, host: webhook.host } : undefined,
      logger: context.logger,
      notice: (sentence) => context.notice(sentence),
    });
  },
  async doctor(config, context) {
    const { checkTelegram } = await import('./doctor.js');
    return [await checkTelegram(config.api_root, config.token, context)];
  },
};
