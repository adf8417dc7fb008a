/**
 * What extends one hob process, put together once at start: plugins (read first, since
 * they add skills, hooks and MCP servers), skills, MCP servers (connecting in the
 * background) and the commands they bring. A broken piece is reported and skipped.
 */
import { join } from 'node:path';
import type { HobConfig } from './config/schema.js';
import type { Logger } from './logger.js';
import { McpManager } from './mcp/manager.js';
import { describePlugins, expandCommand, loadPlugins, type LoadedPlugins } from './plugins/plugins.js';
import { bundledSkillsDir, loadSkills, skillsPromptSection, type SkillCatalog } from './skills/catalog.js';
import { skillInvocation, skillTool } from './skills/skill-tool.js';
import type { AnyTool, ToolRegistry } from './tools/tool.js';

export type CommandExpansion = { kind: 'prompt'; text: string } | { kind: 'reply'; text: string };

export type Extensions = {
  mcp: McpManager;
  skills: SkillCatalog;
  plugins: LoadedPlugins;
  /** Tools to register with the built-ins (the skill tool, when there are skills). */
  tools: AnyTool[];
  /** The system prompt's skills part (names and descriptions only). */
  skillsPrompt: string | undefined;
  /** The same for a small window: names only. */
  skillsPromptBrief: string | undefined;
  /**
   * `/skill NAME args` and plugin commands: the prompt the model gets, or a reply for the
   * person (unknown skill, the list). Undefined when the name is neither.
   */
  expand(name: string, args: string): CommandExpansion | undefined;
  /** Plugin commands for the platforms' menus. */
  menu(): { command: string; description: string }[];
  describeMcp(): string;
  describePlugins(): string;
  /** Everything that went wrong while loading, each naming its file or server. */
  problems: string[];
  close(): Promise<void>;
};

export type ExtensionOptions = {
  registry: ToolRegistry;
  logger?: Logger;
  /** Command names hob itself uses; a plugin command may not take one. */
  reservedCommands: ReadonlySet<string>;
  /** Tests shorten MCP restart backoff. */
  mcpConnection?: ConstructorParameters<typeof McpManager>[0]['connection'];
};

export function loadExtensions(config: HobConfig, options: ExtensionOptions): Extensions {
  const pluginsDir = join(config.data_dir, 'plugins');
  const plugins = loadPlugins(pluginsDir, config.plugins, {
    commands: new Set([...options.reservedCommands, 'skill', 'mcp']),
    mcpServers: new Set(Object.keys(config.mcp.servers)),
  });
  const bundled = bundledSkillsDir();
  const skills = loadSkills([
    ...(bundled ? [{ origin: 'bundled', dir: bundled }] : []),
    ...plugins.skillSources,
    { origin: 'yours', dir: join(config.data_dir, 'skills') },
  ]);
  const mcp = new McpManager({
    servers: { ...config.mcp.servers, ...plugins.mcpServers },
    callTimeoutSeconds: config.mcp.call_timeout_seconds,
    registry: options.registry,
    logger: options.logger,
    connection: options.mcpConnection,
  });
  const problems = [
    ...plugins.plugins.filter((plugin) => plugin.state === 'broken').map((plugin) => `plugin ${plugin.name} skipped: ${plugin.reason}`),
    ...skills.problems.map((problem) => `skill skipped: ${problem}`),
  ];
  for (const problem of problems) options.logger?.warn({ problem }, 'extension problem');

  return {
    mcp,
    skills,
    plugins,
    tools: skills.list().length ? [skillTool(() => skills) as unknown as AnyTool] : [],
    skillsPrompt: skillsPromptSection(skills.list()),
    skillsPromptBrief: skillsPromptSection(skills.list(), true),
    expand(name, args) {
      if (name === 'skill') {
        if (!args) {
          const invocable = skills.list().filter((skill) => skill.userInvocable);
          if (invocable.length === 0) return { kind: 'reply', text: 'There are no skills yet. Add one as skills/<name>/SKILL.md in the data folder (see the README).' };
          return { kind: 'reply', text: ['Skills (run one with /skill NAME what you want):', ...invocable.map((skill) => `${skill.name} — ${skill.description}`)].join('\n') };
        }
        const [skillName = '', ...rest] = args.split(/\s+/);
        const invocation = skillInvocation(skills, skillName.toLowerCase(), rest.join(' ').trim());
        return 'error' in invocation ? { kind: 'reply', text: invocation.error } : { kind: 'prompt', text: invocation.prompt };
      }
      const command = plugins.commands.get(name);
      return command ? { kind: 'prompt', text: expandCommand(command, args) } : undefined;
    },
    menu: () => [...plugins.commands.values()].map((command) => ({ command: command.name, description: command.description.slice(0, 100) })),
    describeMcp: () => mcp.describe(),
    describePlugins: () => describePlugins(plugins.plugins, pluginsDir),
    problems,
    close: () => mcp.close(),
  };
}
