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
