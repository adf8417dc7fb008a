/** People and linked identities on PostgreSQL (the port: ../../people.ts). */
import type { PeopleRepository } from '../../people.js';
import type { Sql } from '../sql.js';

export class PostgresPeople implements PeopleRepository {
  constructor(
    private readonly sql: Sql,
    /** Moves one person's memory entries to another (the entries repository drops their vectors). */
    private readonly moveEntries: (fromPersonId: string, toPersonId: string) => void,
  ) {}

  linkedPerson(platform: string, userId: string): string | undefined {
    return this.sql.get<{ person_id: string }>('SELECT person_id FROM person_links WHERE platform = ? AND user_id = ?', platform, userId)?.person_id;
  }

  links(personId: string): { platform: string; userId: string }[] {
    return this.sql.all<{ platform: string; userId: string }>('SELECT platform, user_id "userId" FROM person_links WHERE person_id = ? ORDER BY created_at', personId);
  }

  newLinkCode(personId: string, generate: () => string, now: number, expiresAt: number): string {
    return this.sql.transaction(() => {
      this.sql.run('DELETE FROM link_codes WHERE person_id = ? OR expires_at <= ?', personId, now);
      for (;;) {
        const code = generate();
        if (this.sql.run('INSERT INTO link_codes (code, person_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (code) DO NOTHING', code, personId, expiresAt) === 1) return code;
      }
    });
  }

  codeOwner(code: string, now: number): string | undefined {
    return this.sql.get<{ person_id: string }>('SELECT person_id FROM link_codes WHERE code = ? AND expires_at > ?', code, now)?.person_id;
  }

  wrongCodesSince(personId: string, since: number): number {
    return this.sql.get<{ n: number }>('SELECT count(*) AS n FROM link_failures WHERE person_id = ? AND at > ?', personId, since)?.n ?? 0;
  }

  recordWrongCode(personId: string, now: number, forgetBefore: number, maxTries: number): void {
    this.sql.transaction(() => {
      this.sql.run('DELETE FROM link_failures WHERE at <= ?', forgetBefore);
      this.sql.run('INSERT INTO link_failures (person_id, at) VALUES (?, ?)', personId, now);
      this.sql.run('UPDATE link_codes SET wrong_tries = wrong_tries + 1 WHERE expires_at > ?', now);
      this.sql.run('DELETE FROM link_codes WHERE wrong_tries >= ? OR expires_at <= ?', maxTries, now);
    });
  }

  join(code: string, platform: string, userId: string, from: string, to: string, now: number): void {
    this.sql.transaction(() => {
      this.sql.run('DELETE FROM link_codes WHERE code = ?', code);
      this.sql.run('INSERT INTO person_links (platform, user_id, person_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (platform, user_id) DO UPDATE SET person_id = excluded.person_id', platform, userId, to, now);
      this.moveEntries(from, to);
      this.sql.run('UPDATE sessions SET person_id = ? WHERE person_id = ?', to, from);
      this.sql.run('UPDATE message_search SET person_id = ? WHERE person_id = ?', to, from);
      this.sql.run('UPDATE jobs SET owner_id = ? WHERE owner_id = ?', to, from);
      this.sql.run('UPDATE person_links SET person_id = ? WHERE person_id = ?', to, from);
      if (this.sql.get('SELECT 1 FROM profiles WHERE person_id = ?', to)) this.sql.run('DELETE FROM profiles WHERE person_id = ?', from);
      else this.sql.run('UPDATE profiles SET person_id = ? WHERE person_id = ?', to, from);
    });
  }

  unlink(platform: string, userId: string): void {
    this.sql.run('DELETE FROM person_links WHERE platform = ? AND user_id = ?', platform, userId);
  }
}
