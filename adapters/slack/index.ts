/**
 * Slack as hob sees it: its config section (Socket Mode or HTTP mode), who may talk to hob
 * there, how to create the adapter (Bolt loads only then) and its doctor checks. Listed once
 * in adapters/index.ts.
 */
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { SLACK_CAPABILITIES } from './capabilities.js';
import { slackConfigSchema, type SlackConfig } from './config.js';

export type { SlackConfig };

export const slackChannel: ChannelModule<SlackConfig> = {
  name: 'slack',
  label: 'Slack',
  configSchema: slackConfigSchema,
  capabilities: SLACK_CAPABILITIES,
  secretEnv: ['SLACK_*'],
  access: (config) => ({ allowFrom: config.allow_from, allowedGroups: config.allowed_channels }),
  async create(config, context) {
    const { createSlackAdapter } = await import('./slack-adapter.js');
    const httpMode = config.app_token === undefined && config.signing_secret !== undefined;
    return createSlackAdapter({
      botToken: config.bot_token,
      appToken: config.app_token,
      http: httpMode ? { signingSecret: config.signing_secret as string, port: config.port, host: config.host } : undefined,
      apiUrl: config.api_url,
      serverPingTimeoutMs: config.socket_timeout_seconds * 1000,
      logger: context.logger,
    });
  },
  async doctor(config) {
    const { checkSlack } = await import('./doctor.js');
    return checkSlack({ botToken: config.bot_token, appToken: config.app_token, apiUrl: config.api_url });
  },
};
