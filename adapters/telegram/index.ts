/**
 * Telegram as hob sees it: its config section, who may talk to hob there, how to create the
 * adapter (grammy loads only then) and its doctor check. Listed once in adapters/index.ts.
 */
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { MAX_COMMANDS, TELEGRAM_CAPABILITIES } from './capabilities.js';
import { telegramConfigSchema, type TelegramConfig } from './config.js';

export type { TelegramConfig };

export const telegramChannel: ChannelModule<TelegramConfig> = {
  name: 'telegram',
  label: 'Telegram',
  configSchema: telegramConfigSchema,
  capabilities: TELEGRAM_CAPABILITIES,
  secretEnv: ['TELEGRAM_*'],
  menu: { maxCommands: MAX_COMMANDS },
  access: (config) => ({ allowFrom: config.allow_from, allowedGroups: config.allowed_groups }),
  async create(config, context) {
    const { createTelegramAdapter } = await import('./telegram-adapter.js');
    const webhook = config.webhook;
    return createTelegramAdapter({
      token: config.token,
      apiRoot: config.api_root,
      webhook: webhook ? { url: webhook.url, secretToken: webhook.secret_token, port: webhook.port, host: webhook.host } : undefined,
      logger: context.logger,
    });
  },
  async doctor(config, context) {
    const { checkTelegram } = await import('./doctor.js');
    return [await checkTelegram(config.api_root, config.token, context)];
  },
};
