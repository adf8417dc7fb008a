/** Small text helpers every layer may use (the scheduler's notes, the gateway's progress lines). */

/** A text on one line, cut to `max` characters with "…". */
export function oneLine(value: string, max: number): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Every character in Latin-1 (what V8 can hold in one byte a character). */
const LATIN1_ONLY = /^[\x00-\xff]*$/;

/**
 * `text` as V8's one-byte string when all of it fits in Latin-1, else `text` itself. A string
 * cut from a text that holds even one character beyond Latin-1 (a file with an em dash
 * somewhere, its front matter parsed into fields) stays two bytes a character whatever it
 * holds, and so does every string built from it: one skill description read that way made
 * the whole system prompt, and so each model request's JSON, two bytes a character (a 16.6 KB
 * request made and copied as 33 KB, bench/profile.ts alloc). For text kept for the life of
 * the process and sent again and again; it copies once.
 */
export function oneByte(text: string): string {
  return LATIN1_ONLY.test(text) ? Buffer.from(text, 'latin1').toString('latin1') : text;
}
