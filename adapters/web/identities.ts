/**
 * Who is signed in to the web chat. A person is a web user id: one from `allow_from` (signed
 * in by a link the owner prints) or a visitor's `v-…` id made when they ask for access (the
 * gateway then pairs them like anyone else). A sign-in code works once, for ten minutes; a
 * session is a random cookie whose hash is stored here, so it survives a restart and is
 * revoked by deleting its row. Neither a code nor a token is ever stored in the clear.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { openWebDb, type WebDb } from './web-db.js';

export type WebPerson = { id: string; name: string };

/** A live session: the cookie's hash (never the cookie) and whose it is. */
export type WebSession = { tokenHash: string; person: WebPerson };

export type SessionRow = { userId: string; name: string; createdAt: number; lastSeenAt: number; expiresAt: number };

export const CODE_TTL_MS = 10 * 60_000;
const DAY_MS = 86_400_000;
/** A session's last use is written at most this often (not on every request). */
const TOUCH_EVERY_MS = 60_000;
const VISITOR_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** The identities in data_dir's web.db for one piece of work (the CLI and `/web` open it briefly). */
export function withIdentities<T>(dataDir: string, use: (identities: WebIdentities) => T): T {
  const db = openWebDb(dataDir);
  try {
    return use(new WebIdentities(db));
  } finally {
    db.close();
  }
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A display name as people may give it: one line, no control characters, at most 64 characters. */
export function cleanName(name: string): string {
  return name.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 64);
}

export class WebIdentities {
  constructor(
    private readonly db: WebDb,
    private readonly now: () => number = Date.now,
  ) {}

  person(id: string): WebPerson | undefined {
    return this.db.prepare('SELECT id, name FROM people WHERE id = ?').get(id) as WebPerson | undefined;
  }

  /** Records a person, or gives a known one a new name. */
  savePerson(id: string, name: string): WebPerson {
    const shown = cleanName(name) || id;
    this.db.prepare('INSERT INTO people (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name').run(id, shown, this.now());
    return { id, name: shown };
  }

  /** A visitor who asked for access: a fresh `v-` id nobody has had. */
  newVisitor(name: string, taken: (id: string) => boolean): WebPerson {
    for (;;) {
      const id = `v-${Array.from({ length: 8 }, () => VISITOR_ALPHABET[randomInt(VISITOR_ALPHABET.length)]).join('')}`;
      if (!this.person(id) && !taken(id)) return this.savePerson(id, name);
    }
  }

  /** A one-time sign-in code for `userId` (only its hash is kept). */
  issueCode(userId: string, ttlMs = CODE_TTL_MS): { code: string; expiresAt: number } {
    const code = randomBytes(18).toString('base64url');
    const expiresAt = this.now() + ttlMs;
    this.db.prepare('DELETE FROM sign_in_codes WHERE expires_at <= ?').run(this.now());
    this.db.prepare('INSERT INTO sign_in_codes (code_hash, user_id, expires_at) VALUES (?, ?, ?)').run(hashSecret(code), userId, expiresAt);
    return { code, expiresAt };
  }

  /**
   * The person a code signs in, once: the row is deleted by the same statement that reads it,
   * so a second use, in this process or another, finds nothing. Undefined when unknown,
   * used or expired.
   */
  redeemCode(code: string): string | undefined {
    const row = this.db.prepare('DELETE FROM sign_in_codes WHERE code_hash = ? RETURNING user_id AS userId, expires_at AS expiresAt').get(hashSecret(code)) as
      | { userId: string; expiresAt: number }
      | undefined;
    return row && row.expiresAt > this.now() ? row.userId : undefined;
  }

  /** A new session for a person: the cookie's token (shown once, to the browser). */
  startSession(userId: string, days: number): { token: string; maxAgeSeconds: number } {
    const token = randomBytes(32).toString('base64url');
    const now = this.now();
    this.db.prepare('INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(hashSecret(token), userId, now, now, now + days * DAY_MS);
    return { token, maxAgeSeconds: days * 86_400 };
  }

  /**
   * The signed-in person for a cookie's token; undefined when the token is forged, signed out,
   * revoked or expired. Each use moves the expiry `days` ahead (written at most once a minute).
   */
  session(token: string, days: number): WebSession | undefined {
    const tokenHash = hashSecret(token);
    const row = this.db
      .prepare('SELECT s.user_id AS id, p.name AS name, s.last_seen_at AS lastSeenAt, s.expires_at AS expiresAt FROM sessions s JOIN people p ON p.id = s.user_id WHERE s.token_hash = ?')
      .get(tokenHash) as { id: string; name: string; lastSeenAt: number; expiresAt: number } | undefined;
    const now = this.now();
    if (!row || row.expiresAt <= now) return undefined;
    if (now - row.lastSeenAt >= TOUCH_EVERY_MS) this.db.prepare('UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE token_hash = ?').run(now, now + days * DAY_MS, tokenHash);
    return { tokenHash, person: { id: row.id, name: row.name } };
  }

  /** Whether a session (by hash) is still valid: open event streams check theirs now and then. */
  isLive(tokenHash: string): boolean {
    const row = this.db.prepare('SELECT expires_at AS expiresAt FROM sessions WHERE token_hash = ?').get(tokenHash) as { expiresAt: number } | undefined;
    return row !== undefined && row.expiresAt > this.now();
  }

  endSession(tokenHash: string): void {
    this.db.prepare('DELETE FROM sessions WHERE token_hash = ?').run(tokenHash);
  }

  /** Signs a person out everywhere (a lost laptop); how many sessions ended. */
  endSessionsOf(userId: string): number {
    return this.db.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId).changes;
  }

  endAllSessions(): number {
    return this.db.prepare('DELETE FROM sessions').run().changes;
  }

  sessions(): SessionRow[] {
    return this.db
      .prepare(
        'SELECT s.user_id AS userId, p.name AS name, s.created_at AS createdAt, s.last_seen_at AS lastSeenAt, s.expires_at AS expiresAt FROM sessions s JOIN people p ON p.id = s.user_id WHERE s.expires_at > ? ORDER BY s.last_seen_at DESC',
      )
      .all(this.now()) as SessionRow[];
  }

  /** Forgets expired codes and sessions. */
  sweep(): void {
    const now = this.now();
    this.db.prepare('DELETE FROM sign_in_codes WHERE expires_at <= ?').run(now);
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now);
  }
}
