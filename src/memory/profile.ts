import type { Clock } from '../core/clock.js';
import { canonicalTimezone } from '../core/timezone.js';
import type { Db } from '../store/db.js';

export const PROFILE_FIELDS = ['name', 'timezone', 'language', 'style', 'notes'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/** How a person likes to be addressed and answered. Unset fields are absent. */
export type Profile = Partial<Record<ProfileField, string>>;

const FIELD_LIMIT = 500;

/** Per-person profile: preferred name, timezone, language, answer style, free notes. */
export class ProfileStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

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

  /**
   * Sets one field (an empty value clears it). Returns the stored value; throws an error that
   * names the problem and the fix when the value cannot be used.
   */
  set(personId: string, field: ProfileField, value: string): string | undefined {
    let stored: string | undefined = value.trim() || undefined;
    if (stored && stored.length > FIELD_LIMIT) throw new Error(`The ${field} is too long (${stored.length} characters); keep it under ${FIELD_LIMIT}.`);
    if (field === 'timezone' && stored) stored = canonicalTimeZone(stored);
    const now = this.clock.now();
    this.db.prepare('INSERT INTO profiles (person_id, updated_at) VALUES (?, ?) ON CONFLICT (person_id) DO NOTHING').run(personId, now);
    // The column name comes from the closed list above, never from the caller's text.
    this.db.prepare(`UPDATE profiles SET ${field} = ?, updated_at = ? WHERE person_id = ?`).run(stored ?? null, now, personId);
    return stored;
  }

  clear(personId: string): void {
    this.db.prepare('DELETE FROM profiles WHERE person_id = ?').run(personId);
  }
}

export function isProfileField(name: string): name is ProfileField {
  return (PROFILE_FIELDS as readonly string[]).includes(name);
}

/** "europe/rome" → "Europe/Rome", "Asia/Kolkata" as written; an unknown name is an error that says what is expected. */
function canonicalTimeZone(name: string): string {
  const canonical = canonicalTimezone(name);
  if (canonical === undefined) throw new Error(`"${name}" is not a time zone; use an IANA name like Europe/Rome or America/New_York.`);
  return canonical;
}
