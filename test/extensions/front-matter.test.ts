import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseWithYamlPackage } from 'yaml';
import { FRONT_MATTER, FrontMatterError } from '../../src/core/front-matter.js';
import { parseYaml } from '../../src/core/yaml.js';
import { describePlugins, loadPlugins } from '../../src/plugins/plugins.js';
import { readSkillFile } from '../../src/skills/skill-file.js';
import { bundledAgentsDir } from '../../src/engine/agents/definitions.js';
import { bundledSkillsDir } from '../../src/skills/catalog.js';
import { tempDir } from '../support/temp-dirs.js';
import { writeTree } from './support.js';

function bundledFiles(): string[] {
  const skills = bundledSkillsDir() as string;
  const agents = bundledAgentsDir() as string;
  return [
    ...readdirSync(skills).map((name) => join(skills, name, 'SKILL.md')),
    ...readdirSync(agents).filter((name) => name.endsWith('.md')).map((name) => join(agents, name)),
  ];
}

describe('front matter', () => {
  it('of every bundled skill and agent reads as the yaml package (hob read it with before) reads it', () => {
    const files = bundledFiles();
    expect(files.length).toBeGreaterThanOrEqual(6);
    for (const file of files) {
      const front = FRONT_MATTER.exec(readFileSync(file, 'utf8'))?.[1] as string;
      expect(parseYaml(front), file).toEqual(parseWithYamlPackage(front));
    }
  });

  it('that is not valid YAML names the file and the line of the file', () => {
    const root = tempDir('hob-front-matter-');
    writeTree(root, { 'twice/SKILL.md': '---\nname: twice\ndescription: One\ndescription: Two\n---\nbody\n' });
    const path = join(root, 'twice', 'SKILL.md');
    expect(() => readSkillFile(path, 'yours')).toThrow(
      new FrontMatterError(`${path}: the front matter is not valid YAML (line 4, column 1: duplicate key "description": a key may appear once in a mapping)`),
    );
  });

  it("of a plugin's command that is not valid YAML marks the plugin broken, naming the command file and the line", () => {
    const dir = tempDir('hob-front-matter-');
    writeTree(dir, {
      'garden/plugin.json': JSON.stringify({ name: 'garden', version: '1', description: 'Plants' }),
      'garden/commands/water.md': '---\ndescription: "Plan the watering\n---\nWater $ARGUMENTS\n',
    });
    const loaded = loadPlugins(dir, { enabled: [], disabled: [] }, { commands: new Set(), mcpServers: new Set() });
    expect(describePlugins(loaded.plugins, dir)).toBe('garden 1: broken — commands/water.md: the front matter is not valid YAML (line 3, column 1: a "quoted" string is not closed)');
    expect(loaded.commands.size).toBe(0);
  });
});
