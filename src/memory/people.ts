import { randomInt } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { PersonResolver } from '../core/person.js';
import type { Db } from '../store/db.js';

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
    private readonly db: Db,
    private readonly clock: Clock,
    /** Moves what one person owned to another (memory entries and their index). */
    private readonly moveEntries: (fromPersonId: string, toPersonId: string) => void,
  ) {}

  personId(platform: string, userId: string): string {
    const row = this.db.prepare('SELECT person_id FROM person_links WHERE platform = ? AND user_id = ?').get(platform, userId) as { person_id: string } | undefined;
    return row?.person_id ?? `${platform}:${userId}`;
  }

  /** The identities that belong to a person (its own id first). */
  identities(personId: string): string[] {
    const linked = this.db.prepare('SELECT platform, user_id FROM person_links WHERE person_id = ? ORDER BY created_at').all(personId) as { platform: string; user_id: string }[];
    return [personId, ...linked.map((row) => `${row.platform}:${row.user_id}`).filter((id) => id !== personId)];
  }

  /** A new six-digit code that lets another identity join this person; replaces the person's earlier code. */
  createLinkCode(personId: string): string {
    const now = this.clock.now();
    this.db.prepare('DELETE FROM link_codes WHERE person_id = ? OR expires_at <= ?').run(personId, now);
    for (;;) {
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const taken = this.db.prepare('SELECT 1 FROM link_codes WHERE code = ?').get(code);
      if (taken) continue;
      this.db.prepare('INSERT INTO link_codes (code, person_id, expires_at) VALUES (?, ?, ?)').run(code, personId, now + LINK_CODE_TTL_MS);
      return code;
    }
  }

  /**
   * Joins this identity to the person who made the code. The code works once. Wrong codes
   * are counted in the database (a restart forgives nothing): five in an hour lock the
   * person out, and every live code dies after five wrong tries from anyone.
   */
  redeem(code: string, platform: string, userId: string): LinkOutcome {
    const now = this.clock.now();
    const guesser = this.personId(platform, userId);
    const failures = this.db.prepare('SELECT count(*) AS n FROM link_failures WHERE person_id = ? AND at > ?').get(guesser, now - FAILED_REDEEM_WINDOW_MS) as { n: number };
    if (failures.n >= MAX_FAILED_REDEEMS) return { ok: false, reason: 'Too many wrong codes. Wait an hour, then send /link CODE again with a fresh code.' };
    const row = this.db.prepare('SELECT person_id, expires_at FROM link_codes WHERE code = ? AND expires_at > ?').get(code.trim(), now) as { person_id: string; expires_at: number } | undefined;
    if (!row) {
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM link_failures WHERE at <= ?').run(now - FAILED_REDEEM_WINDOW_MS);
        this.db.prepare('INSERT INTO link_failures (person_id, at) VALUES (?, ?)').run(guesser, now);
        this.db.prepare('UPDATE link_codes SET wrong_tries = wrong_tries + 1 WHERE expires_at > ?').run(now);
        this.db.prepare('DELETE FROM link_codes WHERE wrong_tries >= ? OR expires_at <= ?').run(MAX_WRONG_TRIES_PER_CODE, now);
      })();
      return { ok: false, reason: 'That code is unknown or has expired (a code also stops working after five wrong tries). Send /link on your other account to get a new one.' };
    }
    const current = this.personId(platform, userId);
    if (current === row.person_id) return { ok: false, reason: 'This account already belongs to you there.' };
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM link_codes WHERE code = ?').run(code.trim());
      this.db
        .prepare('INSERT INTO person_links (platform, user_id, person_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (platform, user_id) DO UPDATE SET person_id = excluded.person_id')
        .run(platform, userId, row.person_id, now);
      // What this identity knew as its own person goes with it.
      this.moveEntries(current, row.person_id);
      // So do its past conversations: /sessions, /resume and session_search find them under the person.
      this.db.prepare('UPDATE sessions SET person_id = ? WHERE person_id = ?').run(row.person_id, current);
      this.db.prepare('UPDATE messages_fts SET person_id = ? WHERE person_id = ?').run(row.person_id, current);
      // So do its reminders and reports (issue 11): /jobs on any linked identity shows them.
      this.db.prepare('UPDATE jobs SET owner_id = ? WHERE owner_id = ?').run(row.person_id, current);
      this.db.prepare('UPDATE person_links SET person_id = ? WHERE person_id = ?').run(row.person_id, current);
      const profile = this.db.prepare('SELECT 1 FROM profiles WHERE person_id = ?').get(row.person_id);
      if (!profile) this.db.prepare('UPDATE profiles SET person_id = ? WHERE person_id = ?').run(row.person_id, current);
      else this.db.prepare('DELETE FROM profiles WHERE person_id = ?').run(current);
    })();
    return { ok: true, personId: row.person_id };
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
    this.db.prepare('DELETE FROM person_links WHERE platform = ? AND user_id = ?').run(platform, userId);
    return { ok: true, personId: own };
  }
}
