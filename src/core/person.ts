/**
 * Who a platform identity belongs to. A person is `platform:userId` until identities are
 * linked (`/link`); memory, profile, jobs and sessions are keyed by the person id.
 */
export interface PersonResolver {
  personId(platform: string, userId: string): string;
}

/** Every identity its own person (no links): the resolver before the people store exists. */
export const unlinkedPeople: PersonResolver = {
  personId: (platform, userId) => `${platform}:${userId}`,
};

/** The platform a session key belongs to (`telegram:42` → `telegram`). */
export function platformOf(sessionKey: string): string {
  return sessionKey.split(':', 1)[0] ?? '';
}
