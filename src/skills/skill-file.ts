/**
 * One skill file: `<dir>/<name>/SKILL.md`, YAML front matter between `---` lines, then the
 * body (instructions for the model). Errors name the file and the field.
 */
import { z } from 'zod';
import { FRONT_MATTER, FrontMatterError, readFrontMatterFile } from '../core/front-matter.js';

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

/** A skill file that cannot be used; the message names the file and the field. */
export { FrontMatterError as SkillFileError, FRONT_MATTER };

export function readSkillFile(path: string, origin: string): Skill {
  const { data, body } = readFrontMatterFile(path, skillFrontMatterSchema, 'name:, description:');
  if (!body) throw new FrontMatterError(`${path}: the skill has no instructions after the front matter.`);
  return { name: data.name, description: data.description, userInvocable: data.user_invocable, body, origin, path };
}
