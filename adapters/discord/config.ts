/** `channels.discord`: the bot token, the REST address, who may talk to hob and where. Strict keys. */
import { z } from 'zod';
import { baseUrlWithoutSlash, idList, nonNegativeInt, positiveInt, secret } from '../../src/config/schema-parts.js';

/**
 * Which of the bot's gateway shards this process runs (`ids`) out of how many all processes
 * run together (`count`). Discord sends a server's events to shard (server id >> 22) % count
 * and DMs to shard 0, so the processes' `ids` together must cover 0 … count-1, each once.
 */
const shardsSchema = z.lazy(() =>
  z
    .strictObject({
      ids: z.array(nonNegativeInt).min(1, { error: 'expected at least one shard id, e.g. [0]' }),
      count: positiveInt,
    })
    .superRefine((shards, ctx) => {
      const outside = shards.ids.filter((id) => id >= shards.count);
      if (outside.length > 0) ctx.addIssue({ code: 'custom', path: ['ids'], message: `expected shard ids below count (${shards.count}); ${outside.join(', ')} is not` });
      if (new Set(shards.ids).size !== shards.ids.length) ctx.addIssue({ code: 'custom', path: ['ids'], message: 'expected each shard id once' });
    }),
);

export const discordConfigSchema = z.lazy(() =>
  z.strictObject({
    token: secret('expected a bot token from the Discord developer portal'),
    api_url: baseUrlWithoutSlash.default('https://discord.com/api'),
    allow_from: idList,
    allowed_channels: idList,
    /** Servers where every member may talk to hob (when they mention it); commands are registered there. */
    allowed_guilds: idList,
    /** Several processes: the shards this one runs. Absent: one process runs the bot's only shard. */
    shards: shardsSchema.optional(),
  }),
);

export type DiscordConfig = z.output<typeof discordConfigSchema>;
