/** Profiles on SQLite (the port: ../profiles.ts). */
import { PROFILE_FIELDS, type Profile, type ProfileField, type ProfileRepository } from '../profiles.js';
import type { Db } from './db.js';

export class SqliteProfiles implements ProfileRepository {
  constructor(private readonly db: Db) {}

  get(personId: string): Profile {
    const row = this.db.prepare('SELECT name, timezone, language, style, notes FROM profiles WHERE person_id = ?').get(personId) as Record<ProfileField, string | null> | undefined;
    const profile: Profile = {};
    if (!row) return profile;
    for (const field of PROFILE_FIELDS) {
      const value = row[field];
      if (value) profile[field] = value;
    }
    return profile;
  }

  set(personId: string, field: ProfileField, value: string | undefined, now: number): void {
    this.db.prepare('INSERT INTO profiles (person_id, updated_at) VALUES (?, ?) ON CONFLICT (person_id) DO NOTHING').run(personId, now);
    // The column name comes from the closed list of fields, never from the caller's text.
    if (!PROFILE_FIELDS.includes(field)) throw new Error(`unknown profile field ${String(field)}`);
    this.db.prepare(`UPDATE profiles SET ${field} = ?, updated_at = ? WHERE person_id = ?`).run(value ?? null, now, personId);
  }

  clear(personId: string): void {
    this.db.prepare('DELETE FROM profiles WHERE person_id = ?').run(personId);
  }
}
