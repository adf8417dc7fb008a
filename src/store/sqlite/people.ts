/** People and linked identities on SQLite (the port: ../people.ts). */
import type { PeopleRepository } from '../people.js';
import type { Db } from './db.js';

export class SqlitePeople implements PeopleRepository {
  constructor(
    private readonly db: Db,
    /** Moves one person's memory entries to another (the entries repository keeps its index), and their search rows still waiting for the messages' index. */
    private readonly moveEntries: (fromPersonId: string, toPersonId: string) => void,
  ) {}

  linkedPerson(platform: string, userId: string): string | undefined {
    const row = this.db.prepare('SELECT person_id FROM person_links WHERE platform = ? AND user_id = ?').get(platform, userId) as { person_id: string } | undefined;
    return row?.person_id;
  }

  links(personId: string): { platform: string; userId: string }[] {
    const rows = this.db.prepare('SELECT platform, user_id FROM person_links WHERE person_id = ? ORDER BY created_at').all(personId) as { platform: string; user_id: string }[];
    return rows.map((row) => ({ platform: row.platform, userId: row.user_id }));
  }

  newLinkCode(personId: string, generate: () => string, now: number, expiresAt: number): string {
    this.db.prepare('DELETE FROM link_codes WHERE person_id = ? OR expires_at <= ?').run(personId, now);
    for (;;) {
      const code = generate();
      if (this.db.prepare('SELECT 1 FROM link_codes WHERE code = ?').get(code)) continue;
      this.db.prepare('INSERT INTO link_codes (code, person_id, expires_at) VALUES (?, ?, ?)').run(code, personId, expiresAt);
      return code;
    }
  }

  codeOwner(code: string, now: number): string | undefined {
    const row = this.db.prepare('SELECT person_id FROM link_codes WHERE code = ? AND expires_at > ?').get(code, now) as { person_id: string } | undefined;
    return row?.person_id;
  }

  wrongCodesSince(personId: string, since: number): number {
    return (this.db.prepare('SELECT count(*) AS n FROM link_failures WHERE person_id = ? AND at > ?').get(personId, since) as { n: number }).n;
  }

  recordWrongCode(personId: string, now: number, forgetBefore: number, maxTries: number): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM link_failures WHERE at <= ?').run(forgetBefore);
      this.db.prepare('INSERT INTO link_failures (person_id, at) VALUES (?, ?)').run(personId, now);
      this.db.prepare('UPDATE link_codes SET wrong_tries = wrong_tries + 1 WHERE expires_at > ?').run(now);
      this.db.prepare('DELETE FROM link_codes WHERE wrong_tries >= ? OR expires_at <= ?').run(maxTries, now);
    })();
  }

  join(code: string, platform: string, userId: string, from: string, to: string, now: number): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM link_codes WHERE code = ?').run(code);
      this.db
        .prepare('INSERT INTO person_links (platform, user_id, person_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (platform, user_id) DO UPDATE SET person_id = excluded.person_id')
        .run(platform, userId, to, now);
      this.moveEntries(from, to);
      this.db.prepare('UPDATE sessions SET person_id = ? WHERE person_id = ?').run(to, from);
      this.db.prepare('UPDATE messages_fts SET person_id = ? WHERE person_id = ?').run(to, from);
      this.db.prepare('UPDATE jobs SET owner_id = ? WHERE owner_id = ?').run(to, from);
      this.db.prepare('UPDATE person_links SET person_id = ? WHERE person_id = ?').run(to, from);
      const profile = this.db.prepare('SELECT 1 FROM profiles WHERE person_id = ?').get(to);
      if (!profile) this.db.prepare('UPDATE profiles SET person_id = ? WHERE person_id = ?').run(to, from);
      else this.db.prepare('DELETE FROM profiles WHERE person_id = ?').run(from);
    })();
  }

  unlink(platform: string, userId: string): void {
    this.db.prepare('DELETE FROM person_links WHERE platform = ? AND user_id = ?').run(platform, userId);
  }
}
