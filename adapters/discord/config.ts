/** `channels.discord`: the bot token, the REST address, who may talk to hob and where. Strict keys. */
import { z } from 'zod';
import { baseUrlWithoutSlash, idList, secret } from '../../src/config/schema-parts.js';

export const discordConfigSchema = z.strictObject({
  token: secret('expected a bot token from the Discord developer portal'),
  api_url: baseUrlWithoutSlash.default('https://discord.com/api'),
  allow_from: idList,
  allowed_channels: idList,
  /** Servers where every member may talk to hob (when they mention it); commands are registered there. */
  allowed_guilds: idList,
});

export type DiscordConfig = z.output<typeof discordConfigSchema>;
