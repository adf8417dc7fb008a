import type { InboundMessage } from './channel.js';

export type GroupSessions = 'per_user' | 'shared';

/**
 * The conversation a message belongs to: `platform:chat[:thread]` for DMs and threads; in
 * groups one conversation per person unless `group_sessions: shared`, so one member's
 * history never reaches another.
 */
export function sessionKeyFor(message: Pick<InboundMessage, 'platform' | 'chatId' | 'threadId' | 'userId' | 'chatType' | 'sharedThread'>, groupSessions: GroupSessions): string {
  const base = message.threadId ? `${message.platform}:${message.chatId}:${message.threadId}` : `${message.platform}:${message.chatId}`;
  if (message.chatType === 'dm' || groupSessions === 'shared' || (message.sharedThread === true && message.threadId)) return base;
  return `${base}:u${message.userId}`;
}

/** A session key taken apart again (the person only in a per-person key): to find a conversation after a restart. */
export function placeOfKey(key: string): { platform: string; chatId: string; threadId?: string; userId?: string } | undefined {
  const [platform, chatId, ...rest] = key.split(':');
  if (!platform || !chatId) return undefined;
  const threadId = rest.find((part) => !part.startsWith('u'));
  const userId = rest.find((part) => part.startsWith('u'))?.slice(1);
  return { platform, chatId, ...(threadId ? { threadId } : {}), ...(userId ? { userId } : {}) };
}
