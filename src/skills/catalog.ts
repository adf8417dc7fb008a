/**
 * The skills one hob knows, from three places in this order — bundled with hob, from
 * enabled plugins, the person's own in `data_dir/skills` — a later one replacing an earlier
 * one of the same name (so you can adapt a bundled skill). A broken file is reported and
 * skipped; it never stops the others.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundledFolder } from '../core/bundled.js';
import { readSkillFile, SkillFileError, type Skill } from './skill-file.js';

export type SkillSource = { origin: string; dir: string };

export type SkillCatalog = {
  list(): Skill[];
  get(name: string): Skill | undefined;
  /** Problems found while loading, each naming the file (and field). */
  problems: string[];
  /** Which skill replaced which ("summarize (yours) replaces the bundled one"). */
  overrides: string[];
};

export function loadSkills(sources: SkillSource[]): SkillCatalog {
  const skills = new Map<string, Skill>();
  const problems: string[] = [];
  const overrides: string[] = [];
  for (const source of sources) {
    if (!existsSync(source.dir)) continue;
    let entries: string[];
    try {
      entries = readdirSync(source.dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      problems.push(`${source.dir}: cannot be listed (${error instanceof Error ? error.message : String(error)})`);
      continue;
    }
    for (const folder of entries) {
      const path = join(source.dir, folder, 'SKILL.md');
      if (!existsSync(path)) continue;
      try {
        const skill = readSkillFile(path, source.origin);
        if (skill.name !== folder) problems.push(`${path}: front matter field "name" is "${skill.name}" but the folder is "${folder}"; using "${skill.name}"`);
        const earlier = skills.get(skill.name);
        if (earlier) overrides.push(`${skill.name} (${skill.origin}) replaces the one from ${earlier.origin}`);
        skills.set(skill.name, skill);
      } catch (error) {
        problems.push(error instanceof SkillFileError ? error.message : `${path}: ${String(error)}`);
      }
    }
  }
  const sorted = [...skills.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { list: () => sorted, get: (name) => skills.get(name), problems, overrides };
}

/** The repository's top-level `skills/` folder (see bundledFolder). */
export function bundledSkillsDir(from = import.meta.url): string | undefined {
  return bundledFolder('skills', from);
}

/** The system prompt's part: names and descriptions (or, for a small window, names only); the text comes from the skill tool. */
export function skillsPromptSection(skills: Skill[], namesOnly = false): string | undefined {
  if (skills.length === 0) return undefined;
  if (namesOnly) return `Skills (load one with the skill tool before you follow it): ${skills.map((skill) => skill.name).join(', ')}.`;
  return [
    'Skills (step-by-step instructions for common tasks; load one with the skill tool before you follow it):',
    ...skills.map((skill) => `- ${skill.name}: ${skill.description}`),
  ].join('\n');
}
