import { randomBytes } from 'node:crypto';

export type IdGenerator = (prefix: string) => string;

/** Sortable-enough, URL-safe ids: prefix + time + randomness. */
export const newId: IdGenerator = (prefix) =>
  `${prefix}_${Date.now().toString(36)}${randomBytes(6).toString('base64url')}`;
