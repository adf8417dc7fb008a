/** The servers (guilds) the fake bot is in, as READY and GUILD_CREATE show them to one shard. */
import { shardOf } from './gateway.js';
import { BOT_ID, BOT_ROLE_ID, type Json } from './world.js';

export type FakeGuild = { id: string; name: string };

let counter = 0n;
/** A new server id (snowflake-shaped) whose events Discord sends to shard `shard[0]` of `shard[1]`. */
export function guildIdOnShard(shard: [number, number]): string {
  // The shard comes from the id's timestamp part (id >> 22): step it one unit at a time.
  let id = (1_250_000_000_000_000_000n >> 22n) + 1000n * ++counter;
  while (shardOf(String(id << 22n), shard[1]) !== shard[0]) id++;
  return String((id << 22n) + 1n);
}

/** GUILD_CREATE for one server, with its channels and threads as channel objects. */
export function guildCreate(guild: FakeGuild, channels: Json[], threads: Json[]): Json {
  return {
    id: guild.id, name: guild.name, icon: null, owner_id: '1', roles: [
      { id: guild.id, name: '@everyone', permissions: '1071698660929', position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
      { id: BOT_ROLE_ID, name: 'hob', permissions: '274878008320', position: 1, color: 0, hoist: false, managed: true, mentionable: false, flags: 0, tags: { bot_id: BOT_ID } },
    ],
    emojis: [], features: [], member_count: 3, members: [], channels, threads,
    presences: [], voice_states: [], stage_instances: [], guild_scheduled_events: [], soundboard_sounds: [], unavailable: false, large: false, joined_at: new Date(0).toISOString(),
    afk_timeout: 300, verification_level: 0, default_message_notifications: 0, explicit_content_filter: 0, mfa_level: 0, nsfw_level: 0, premium_tier: 0, preferred_locale: 'en-US', system_channel_flags: 0, stickers: [],
  };
}
