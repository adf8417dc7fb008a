/**
 * One skill file: `<dir>/<name>/SKILL.md`, YAML front matter between `---` lines, then the
 * body (instructions for the model). Errors name the file and the field.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';

const KEBAB = 'expected a kebab-case name like "daily-briefing" (lowercase letters, digits and "-")';

const skillFrontMatterSchema = z.object({
  name: z.string({ error: KEBAB }).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: KEBAB }).max(64, { error: KEBAB }),
  description: z
    .string({ error: 'expected a one-line description of when to use the skill' })
    .trim()
    .min(1, { error: 'expected a one-line description of when to use the skill' })
    .refine((text) => !text.includes('\n'), { error: 'expected one line (the system prompt lists it)' }),
  user_invocable: z.boolean({ error: 'expected true or false' }).default(true),
});

export type Skill = {
  name: string;
  description: string;
  /** Whether a person may run it with `/skill NAME`. */
  userInvocable: boolean;
  body: string;
  /** Where it came from: `bundled`, `plugin <name>` or `yours`. */
  origin: string;
  path: string;
};

export class SkillFileError extends Error {}

/** YAML front matter between two `---` lines at the start of a Markdown file (skills, plugin commands). */
export const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export function readSkillFile(path: string, origin: string): Skill {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SkillFileError(`${path}: cannot be read (${errorMessage(error)})`);
  }
  const match = FRONT_MATTER.exec(text.replace(/^\uFEFF/, ''));
  if (!match) throw new SkillFileError(`${path}: no front matter. Start the file with a "---" line, then name:, description: and another "---" line.`);
  let data: unknown;
  try {
    data = parseYaml(match[1] as string);
  } catch (error) {
    throw new SkillFileError(`${path}: the front matter is not valid YAML (${errorMessage(error).split('\n')[0]})`);
  }
  const parsed = skillFrontMatterSchema.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || '(front matter)';
    throw new SkillFileError(`${path}: front matter field "${field}": ${issue?.message ?? 'invalid'}`);
  }
  const body = text.slice((match.index ?? 0) + match[0].length).trim();
  if (!body) throw new SkillFileError(`${path}: the skill has no instructions after the front matter.`);
  return { name: parsed.data.name, description: parsed.data.description, userInvocable: parsed.data.user_invocable, body, origin, path };
}
