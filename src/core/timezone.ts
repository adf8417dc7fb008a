import currentNames from '@vvo/tzdb/time-zones-names.json' with { type: 'json' };

/**
 * Every spelling hob knows, by its lower case: the current IANA names (@vvo/tzdb, kept up to
 * date with the tz database) and the ones this Node's ICU lists (which still prefers old
 * names such as Asia/Calcutta). Built on first use.
 */
let spellings: Map<string, string> | undefined;

function knownSpelling(name: string): string | undefined {
  if (!spellings) {
    spellings = new Map();
    for (const known of [...Intl.supportedValuesOf('timeZone'), ...currentNames, 'UTC']) spellings.set(known.toLowerCase(), known);
  }
  return spellings.get(name.toLowerCase());
}

/**
 * A timezone name as the person wrote it, when it is one: a valid IANA name is kept exactly
 * ("Asia/Kolkata" stays "Asia/Kolkata", though ICU calls it "Asia/Calcutta"); only the letter
 * case is set right ("europe/berlin" → "Europe/Berlin"). An alias ("US/Eastern") is accepted
 * as written, never replaced by the zone it points to. Undefined when it names no timezone.
 */
export function canonicalTimezone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return undefined;
  }
  return knownSpelling(name) ?? name;
}
