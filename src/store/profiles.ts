/** Per-person profiles in the Store port (the rules for values are memory/profile.ts's). */

export const PROFILE_FIELDS = ['name', 'timezone', 'language', 'style', 'notes'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/** How a person likes to be addressed and answered. Unset fields are absent. */
export type Profile = Partial<Record<ProfileField, string>>;

export interface ProfileRepository {
  /** The person's set fields (an empty profile when they have none). */
  get(personId: string): Profile;
  /** Sets one field; undefined clears it. */
  set(personId: string, field: ProfileField, value: string | undefined, now: number): void;
  clear(personId: string): void;
}
