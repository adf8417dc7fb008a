import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { PairingRepository, PairingRow } from '../store/pairings.js';
import type { InboundMessage } from './channel.js';
import type { ChannelAccess } from './channel-module.js';

export type { ChannelAccess };

export type AccessVerdict =
  | { kind: 'accept' }
  /** Not addressed to hob, or from someone it does not know in a group: stay silent. */
  | { kind: 'ignore'; reason: string }
  /** An unknown person in a DM: they get a pairing code, owners get an Approve button. */
  | { kind: 'pair'; pairing: PairingRow; isNew: boolean };

/** No ambiguous characters (0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** Deny by default: allow lists from config, plus people an owner approved by pairing code. */
export class AccessControl {
  constructor(
    private readonly channels: Map<string, ChannelAccess>,
    private readonly pairings: PairingRepository,
    private readonly clock: Clock,
    private readonly pairingTtlSeconds: number,
  ) {}

  isOwner(platform: string, userId: string): boolean {
    return this.channels.get(platform)?.allowFrom[0] === userId;
  }

  owners(platform: string): string[] {
    const owner = this.channels.get(platform)?.allowFrom[0];
    return owner ? [owner] : [];
  }

  isAllowedUser(platform: string, userId: string): boolean {
    return Boolean(this.channels.get(platform)?.allowFrom.includes(userId)) || this.pairings.isApproved(platform, userId);
  }

  check(message: InboundMessage): AccessVerdict {
    if (message.chatType !== 'dm') {
      // `/cmd` counts as addressed; `/cmd@otherbot` (left as is by the adapter) does not.
      const addressed = message.mentionsBot || message.replyToBot || /^\/[a-zA-Z0-9_]+(\s|$)/.test(message.text);
      if (!addressed) return { kind: 'ignore', reason: 'group message not addressed to hob' };
      const allowedGroups = this.channels.get(message.platform)?.allowedGroups ?? [];
      const groupAllowed = allowedGroups.includes(message.chatId) || (message.spaceId !== undefined && allowedGroups.includes(message.spaceId));
      if (groupAllowed || this.isAllowedUser(message.platform, message.userId)) return { kind: 'accept' };
      return { kind: 'ignore', reason: 'group sender not allowed' };
    }
    if (this.isAllowedUser(message.platform, message.userId)) return { kind: 'accept' };
    const now = this.clock.now();
    const existing = this.pairings.pendingFor(message.platform, message.userId, now);
    if (existing) return { kind: 'pair', pairing: existing, isNew: false };
    const pairing: PairingRow = {
      code: newCode(),
      platform: message.platform,
      userId: message.userId,
      userName: message.userName,
      chatId: message.chatId,
      status: 'pending',
      createdAt: now,
      expiresAt: now + this.pairingTtlSeconds * 1000,
    };
    this.pairings.insert(pairing);
    return { kind: 'pair', pairing, isNew: true };
  }
}

function newCode(): string {
  return Array.from({ length: 8 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}
