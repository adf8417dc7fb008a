/**
 * Markdown files with YAML front matter between two `---` lines (skills, agent definitions,
 * plugin commands): read, checked against a schema, and split from their body. Every error
 * names the file, and the field when one is wrong.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { errorMessage } from './errors.js';
import { oneByte } from './text.js';
import { parseYaml } from './yaml.js';

/** YAML front matter between two `---` lines at the start of a Markdown file. */
export const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** A front-matter file that cannot be used; the message names the file (and the field). */
export class FrontMatterError extends Error {}

/**
 * The file's front matter, parsed by `schema`, and its body (trimmed). `fields` names what the
 * front matter should hold, for the error when there is none ("name:, description:").
 */
export function readFrontMatterFile<Schema extends z.ZodType>(path: string, schema: Schema, fields: string): { data: z.output<Schema>; body: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new FrontMatterError(`${path}: cannot be read (${errorMessage(error)})`);
  }
  const match = FRONT_MATTER.exec(text.replace(/^\uFEFF/, ''));
  if (!match) throw new FrontMatterError(`${path}: no front matter. Start the file with a "---" line, then ${fields} and another "---" line.`);
  let data: unknown;
  try {
    // Its lines counted from the file's first: the front matter starts on line 2, after "---".
    data = parseYaml(match[1] as string, 2);
  } catch (error) {
    throw new FrontMatterError(`${path}: the front matter is not valid YAML (${errorMessage(error)})`);
  }
  // The file's text is two bytes a character if one of them is beyond Latin-1; its fields and
  // body, cut from it, would stay so and make every prompt built from them two bytes a character.
  // Each schema parses a handful of files once, at start: zod's compiled fast path (a
  // `new Function` per object schema, on its first parse) would cost more than it saves.
  const parsed = schema.safeParse(oneByteStrings(data ?? {}), { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(front matter)';
    const message = issue?.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : (issue?.message ?? 'invalid');
    throw new FrontMatterError(`${path}: front matter field "${field}": ${message}`);
  }
  return { data: parsed.data, body: oneByte(text.replace(/^\uFEFF/, '').slice((match.index ?? 0) + match[0].length).trim()) };
}

/** The parsed YAML with each of its strings one byte a character where it can be (core/text.ts oneByte). */
function oneByteStrings(value: unknown): unknown {
  if (typeof value === 'string') return oneByte(value);
  if (Array.isArray(value)) return value.map(oneByteStrings);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [oneByte(key), oneByteStrings(field)]));
  }
  return value;
}
