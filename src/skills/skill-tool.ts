import { z } from 'zod';
import { defineTool } from '../tools/tool.js';
import type { SkillCatalog } from './catalog.js';

/** `skill { name }`: a skill's full instructions, loaded only when the model needs them. */
export function skillTool(catalog: () => SkillCatalog) {
  return defineTool({
    name: 'skill',
    description: 'Load the full instructions of one of the skills listed in the system prompt, then follow them.',
    input: z.strictObject({ name: z.string().min(1).describe('The skill name, as listed') }),
    readOnly: true,
    async run({ name }) {
      const skill = catalog().get(name);
      if (!skill) {
        const names = catalog().list().map((known) => known.name);
        return { content: `There is no skill called "${name}". Skills: ${names.join(', ') || 'none'}.`, isError: true };
      }
      return `# Skill: ${skill.name}\n\n${skill.body}`;
    },
  });
}

/** What `/skill NAME args` sends to the model: the instructions, then what the person asked. */
export function skillInvocation(catalog: SkillCatalog, name: string, args: string): { prompt: string } | { error: string } {
  const skill = catalog.get(name);
  const invocable = catalog.list().filter((known) => known.userInvocable).map((known) => known.name);
  if (!skill) return { error: `There is no skill called "${name}". Skills you can run: ${invocable.join(', ') || 'none'}.` };
  if (!skill.userInvocable) return { error: `The ${name} skill is for hob's own use; it cannot be run with /skill.` };
  return {
    prompt: [`Run the "${skill.name}" skill. Its instructions:`, '', skill.body, '', args ? `The person's request: ${args}` : 'The person gave no further details.'].join('\n'),
  };
}
