/**
 * Discord as hob sees it: its config section, who may talk to hob there, how to create the
 * adapter (discord.js loads only then) and its doctor checks. Listed once in adapters/index.ts.
 */
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { DISCORD_CAPABILITIES } from './capabilities.js';
import { discordConfigSchema, type DiscordConfig } from './config.js';

export type { DiscordConfig };

export const discordChannel: ChannelModule<DiscordConfig> = {
  name: 'discord',
  label: 'Discord',
  configSchema: discordConfigSchema,
  capabilities: DISCORD_CAPABILITIES,
  secretEnv: ['DISCORD_*'],
  // Discord ids are unique across guilds and channels, so one list holds both.
  access: (config) => ({ allowFrom: config.allow_from, allowedGroups: [...config.allowed_guilds, ...config.allowed_channels] }),
  async create(config, context) {
    const { createDiscordAdapter } = await import('./discord-adapter.js');
    return createDiscordAdapter({
      token: config.token,
      apiUrl: config.api_url,
      allowedGuilds: config.allowed_guilds,
      ...(config.shards ? { shards: config.shards } : {}),
      logger: context.logger,
      onFatal: (sentence) => context.notice(sentence),
    });
  },
  async doctor(config, context) {
    const { checkDiscord } = await import('./doctor.js');
    return checkDiscord(config.api_url, config.token, context, config.shards);
  },
};
