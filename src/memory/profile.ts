import type { Clock } from '../core/clock.js';
import { canonicalTimezone } from '../core/timezone.js';
import { TurnMemo } from '../core/turn-memo.js';
import { PROFILE_FIELDS, type Profile, type ProfileField, type ProfileRepository } from '../store/profiles.js';

export { PROFILE_FIELDS, type Profile, type ProfileField } from '../store/profiles.js';

const FIELD_LIMIT = 500;

/** Per-person profile: preferred name, timezone, language, answer style, free notes. */
export class ProfileStore {
  constructor(
    private readonly profiles: ProfileRepository,
    private readonly clock: Clock,
    private readonly memo = new TurnMemo(),
  ) {}

  /** The stored profile (read once per turn of the event loop: see TurnMemo); not to be changed by the caller. */
  get(personId: string): Profile {
    return this.memo.get(`profile ${personId}`, () => this.profiles.get(personId));
  }

  /**
   * Sets one field (an empty value clears it). Returns the stored value; throws an error that
   * names the problem and the fix when the value cannot be used.
   */
  set(personId: string, field: ProfileField, value: string): string | undefined {
    let stored: string | undefined = value.trim() || undefined;
    if (stored && stored.length > FIELD_LIMIT) throw new Error(`The ${field} is too long (${stored.length} characters); keep it under ${FIELD_LIMIT}.`);
    if (field === 'timezone' && stored) stored = canonicalTimeZone(stored);
    this.profiles.set(personId, field, stored, this.clock.now());
    this.memo.forget();
    return stored;
  }

  clear(personId: string): void {
    this.profiles.clear(personId);
    this.memo.forget();
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
