import { GuildMemberManager, MessageManager, Options, PresenceManager, ReactionManager, type CacheFactory, type GuildMember } from 'discord.js';

/**
 * What the client keeps of what the gateway sends: hob reads each message once, so no
 * messages, presences or reactions; members up to 200 per server (and always hob itself).
 *
 * discord.js finds a manager's limit by the name of its class, and a bundle renames a class
 * that names itself: dist/ holds `class _MessageManager`, so a limit under "MessageManager"
 * was never found and every DM channel kept every message for as long as hob ran (~1.5 KB
 * each, the steady climb of bench/vs-floor.ts's soak). The limits are keyed by each class's
 * name as it is at run time, which is the same word when nothing was renamed.
 */
export function cacheLimits(): CacheFactory {
  return Options.cacheWithLimits({
    ...Options.DefaultMakeCacheSettings,
    [MessageManager.name]: 0,
    [PresenceManager.name]: 0,
    [ReactionManager.name]: 0,
    [GuildMemberManager.name]: { maxSize: 200, keepOverLimit: (member: GuildMember) => member.id === member.client.user.id },
  });
}
