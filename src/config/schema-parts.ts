/**
 * Small schema building blocks shared by schema.ts and channels-schema.ts. Each carries its
 * own "expected …" phrase so every way a value can be wrong reads the same.
 */
import { z } from 'zod';

function integer(expected: string, min: number) {
  return z
    .number({ error: expected })
    .int({ error: expected })
    .min(min, { error: expected })
    .max(Number.MAX_SAFE_INTEGER, { error: expected });
}

export const positiveInt = integer('expected a positive integer', 1);
export const nonNegativeInt = integer('expected a whole number, 0 or more', 0);
export const port = integer('expected a port number from 1 to 65535', 1).max(65_535, {
  error: 'expected a port number from 1 to 65535',
});

export const nonEmptyString = z
  .string({ error: 'expected a string' })
  .min(1, { error: 'expected a non-empty string' });

export const stringList = z.array(nonEmptyString).default(() => []);

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

const HTTP_URL = 'expected an http(s) URL like "https://example.com"';
export const httpUrl = z.string({ error: HTTP_URL }).refine(isHttpUrl, { error: HTTP_URL });

/** A URL that is joined with paths later; a trailing slash would double up. */
export const baseUrlWithoutSlash = httpUrl.transform((url) => url.replace(/\/+$/, ''));

/**
 * A token or secret. The same as a non-empty string; errors.ts recognises secret keys by
 * name and never echoes their values.
 */
export function secret(expected = 'expected a non-empty string', pattern?: RegExp) {
  const text = z.string({ error: expected }).min(1, { error: expected });
  return pattern ? text.regex(pattern, { error: expected }) : text;
}

const ID =
  'expected a user or chat id (a string, or a whole number; quote ids longer than 15 digits, YAML rounds them)';

/**
 * Platform ids, written as strings or numbers, always strings afterwards. Big numbers are
 * refused rather than rounded: Discord snowflakes do not fit in a double.
 */
export const platformId = z.unknown().transform((value, ctx): string => {
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  ctx.addIssue({ code: 'custom', message: ID, input: value });
  return z.NEVER;
});

export const idList = z.array(platformId).default(() => []);
