import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { TurnMemo } from '../core/turn-memo.js';
import type { PersonResolver } from '../core/person.js';
import type { PeopleRepository } from '../store/people.js';

/** How long a `/link` code stays valid. */
export const LINK_CODE_TTL_MS = 10 * 60 * 1000;

/** Wrong codes one person may try per window, so codes cannot be guessed. */
const MAX_FAILED_REDEEMS = 5;
const FAILED_REDEEM_WINDOW_MS = 60 * 60 * 1000;
/**
 * Wrong codes anyone may try while a code is live before it dies: a guesser with several
 * accounts (on several platforms) gets five guesses at it in all, not five per account.
 */
const MAX_WRONG_TRIES_PER_CODE = 5;

export type LinkOutcome = { ok: true; personId: string } | { ok: false; reason: string };

/**
 * People and their linked identities. A person is `platform:userId` until linked; `/link` on
 * one platform shows a short-lived code, `/link CODE` on another joins that identity to the
 * person who asked for the code. Memory, profile and jobs are keyed by the person id, so what
 * the identity owned before is moved to the person it joins.
 */
export class PeopleStore implements PersonResolver {
  constructor(
    private readonly people: PeopleRepository,
    private readonly clock: Clock,
    /** Shared with the profiles: a link moves a profile too. */
    private readonly memo = new TurnMemo(),
  ) {}

  personId(platform: string, userId: string): string {
    return this.memo.get(`person ${platform} ${userId}`, () => this.people.linkedPerson(platform, userId) ?? `${platform}:${userId}`);
  }

  /** The identities that belong to a person (its own id first). */
  identities(personId: string): string[] {
    const linked = this.people.links(personId);
    return [personId, ...linked.map((link) => `${link.platform}:${link.userId}`).filter((id) => id !== personId)];
  }

  /** A new six-digit code that lets another identity join this person; replaces the person's earlier code. */
  createLinkCode(personId: string): string {
    const now = this.clock.now();
    return this.people.newLinkCode(personId, () => String(randomInt(0, 1_000_000)).padStart(6, '0'), now, now + LINK_CODE_TTL_MS);
  }

  /**
   * Joins this identity to the person who made the code. The code works once. Wrong codes
   * are counted in the database (a restart forgives nothing): five in an hour lock the
   * person out, and every live code dies after five wrong tries from anyone.
   */
  redeem(code: string, platform: string, userId: string): LinkOutcome {
    const now = this.clock.now();
    const guesser = this.personId(platform, userId);
    if (this.people.wrongCodesSince(guesser, now - FAILED_REDEEM_WINDOW_MS) >= MAX_FAILED_REDEEMS) return { ok: false, reason: 'Too many wrong codes. Wait an hour, then send /link CODE again with a fresh code.' };
    const owner = this.people.codeOwner(code.trim(), now);
    if (owner === undefined) {
      this.people.recordWrongCode(guesser, now, now - FAILED_REDEEM_WINDOW_MS, MAX_WRONG_TRIES_PER_CODE);
      return { ok: false, reason: 'That code is unknown or has expired (a code also stops working after five wrong tries). Send /link on your other account to get a new one.' };
    }
    const current = this.personId(platform, userId);
    if (current === owner) return { ok: false, reason: 'This account already belongs to you there.' };
    // What this identity owned as its own person goes with it: memory, past conversations
    // (/sessions, /resume, session_search), reminders and reports (issue 11), its profile.
    this.people.join(code.trim(), platform, userId, current, owner, now);
    this.memo.forget();
    return { ok: true, personId: owner };
  }

  /**
   * Separates this identity from the person it was linked to; it is its own person again
   * (with an empty memory: what was saved stays with the person). The identity a person is
   * named after cannot leave it: unlink the others instead.
   */
  unlink(platform: string, userId: string): LinkOutcome {
    const own = `${platform}:${userId}`;
    const current = this.personId(platform, userId);
    if (current === own) {
      const others = this.identities(own).length - 1;
      return { ok: false, reason: others ? `This is the main account of your person; send /unlink from the ${others} linked account(s) instead.` : 'This account is not linked to any other.' };
    }
    this.people.unlink(platform, userId);
    this.memo.forget();
    return { ok: true, personId: own };
  }
}
