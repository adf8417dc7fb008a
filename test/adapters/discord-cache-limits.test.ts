import { DMMessageManager, GuildMemberManager, Message, MessageManager, PresenceManager, ReactionManager, type CacheFactory } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { cacheLimits } from '../../adapters/discord/cache-limits.js';

type Manager = Parameters<CacheFactory>[0];

/** discord.js types the factory's argument as each manager class with its name as a literal: the classes as given. */
const asManager = (manager: object) => manager as Manager;

/** Gives a class the name a bundler gives a class that names itself (dist/ holds `class _MessageManager`), until restored. */
function renamed(manager: object, name: string): () => void {
  const own = Object.getOwnPropertyDescriptor(manager, 'name') as PropertyDescriptor;
  Object.defineProperty(manager, 'name', { value: name, configurable: true });
  return () => Object.defineProperty(manager, 'name', own);
}

/** What the client's cache for `manager` keeps of one entry (discord.js calls the factory so for each manager it makes). */
function keeps(manager: object, made: object = manager): number {
  const cache = cacheLimits()(asManager(manager), Message, asManager(made));
  cache.set('1', {} as never);
  return cache.size;
}

describe('the Discord client caches', () => {
  it("keep no message of a DM channel, also when the bundle renamed discord.js's classes (a DM kept per message for as long as hob ran)", () => {
    expect(keeps(MessageManager, DMMessageManager)).toBe(0);
    const restore = renamed(MessageManager, '_MessageManager');
    try {
      expect(MessageManager.name).toBe('_MessageManager');
      expect(keeps(MessageManager, DMMessageManager)).toBe(0);
      expect(keeps(MessageManager)).toBe(0);
    } finally {
      restore();
    }
  });

  it('keep no presences or reactions, renamed or not', () => {
    for (const manager of [PresenceManager, ReactionManager]) {
      expect(keeps(manager)).toBe(0);
      const restore = renamed(manager, `_${manager.name}`);
      try {
        expect(keeps(manager)).toBe(0);
      } finally {
        restore();
      }
    }
  });

  it('keep server members up to a limit', () => {
    const cache = cacheLimits()(asManager(GuildMemberManager), Message, asManager(GuildMemberManager));
    expect('maxSize' in cache ? cache.maxSize : Infinity).toBe(200);
  });
});
