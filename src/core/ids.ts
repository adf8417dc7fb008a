import { randomFillSync } from 'node:crypto';

export type IdGenerator = (prefix: string) => string;

const ID_RANDOM_BYTES = 6;
/**
 * Random bytes for 256 ids, filled in one call: a call into the system's random source for
 * each id was a native call per new session (a burst of new people makes one each).
 */
const pool = Buffer.alloc(ID_RANDOM_BYTES * 256);
let offset = pool.length;

/** Sortable-enough, URL-safe ids: prefix + time + randomness. */
export const newId: IdGenerator = (prefix) => {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const random = pool.toString('base64url', offset, offset + ID_RANDOM_BYTES);
  offset += ID_RANDOM_BYTES;
  return `${prefix}_${Date.now().toString(36)}${random}`;
};
