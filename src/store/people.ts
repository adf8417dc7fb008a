/**
 * People and their linked identities in the Store port: which platform identities belong to
 * one person, the short-lived `/link` codes, and the wrong codes counted against guessing.
 * The rules (how long a code lives, how many wrong tries) are memory/people.ts's.
 */
export interface PeopleRepository {
  /** The person a platform identity is linked to; undefined when it is its own person. */
  linkedPerson(platform: string, userId: string): string | undefined;
  /** The identities linked to a person, oldest link first. */
  links(personId: string): { platform: string; userId: string }[];
  /**
   * A new code for the person, replacing their earlier one (expired codes go too): `generate`
   * is asked again while the code it gives is taken.
   */
  newLinkCode(personId: string, generate: () => string, now: number, expiresAt: number): string;
  /** The person whose live code this is. */
  codeOwner(code: string, now: number): string | undefined;
  /** Wrong codes this person tried since `since` (ms). */
  wrongCodesSince(personId: string, since: number): number;
  /**
   * Records a wrong code in one transaction: counted for the person (counts older than
   * `forgetBefore` are dropped) and against every live code; a code with `maxTries` wrong
   * tries dies.
   */
  recordWrongCode(personId: string, now: number, forgetBefore: number, maxTries: number): void;
  /**
   * Links the identity to person `to` with `code`, in one transaction: the code is used up,
   * and what `from` (the identity's person until now) owned moves to `to`: memory entries
   * (to be embedded again), sessions and their search, jobs, other identities linked to
   * `from`, and the profile when `to` has none (else `from`'s is dropped).
   */
  join(code: string, platform: string, userId: string, from: string, to: string, now: number): void;
  /** The identity is its own person again. */
  unlink(platform: string, userId: string): void;
}
