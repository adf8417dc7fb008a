/**
 * Plugins: folders in `data_dir/plugins/<name>/` with a `plugin.json` manifest. A plugin
 * may bring skills (`skills/<name>/SKILL.md`), agent definitions (`agents/<name>.md`), commands (`commands/<name>.md`, Markdown
 * prompt templates run with `/<name> args`), hooks and MCP servers (in the manifest, in the
 * same shape as config.yaml). Whether one is on: its manifest's `enabled` (default true),
 * overridden by `plugins.enabled` / `plugins.disabled` in the config. A broken plugin is
 * reported with the reason and skipped. `${PLUGIN_DIR}` in the manifest is the plugin's folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { mcpServersSchema, type McpServerConfig, type PluginsConfig } from '../config/extensions-schema.js';
import { hooksSchema } from '../config/schema.js';
import { mergeHooks } from '../policy/hook-reload.js';
import type { HooksConfig } from '../policy/hooks.js';
import { errorMessage } from '../core/errors.js';
import { parseYaml } from '../core/yaml.js';
import type { SkillSource } from '../skills/catalog.js';
import { FRONT_MATTER } from '../skills/skill-file.js';

const KEBAB = 'expected a kebab-case name like "home-tools" (lowercase letters, digits and "-")';

const pluginManifestSchema = z.strictObject({
  name: z.string({ error: KEBAB }).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: KEBAB }),
  version: z.string({ error: 'expected a version like "1.0.0"' }).min(1, { error: 'expected a version like "1.0.0"' }),
  description: z.string({ error: 'expected a one-line description' }).min(1, { error: 'expected a one-line description' }),
  /** On unless the config says otherwise. */
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  hooks: hooksSchema.optional(),
  mcp_servers: mcpServersSchema.optional(),
});

export type PluginCommand = { name: string; description: string; template: string; plugin: string };

export type PluginStatus = {
  name: string;
  dir: string;
  state: 'enabled' | 'disabled' | 'broken';
  version?: string;
  description?: string;
  /** Why it is broken or disabled. */
  reason?: string;
  contributes: { skills: number; commands: string[]; hooks: number; mcpServers: string[] };
};

export type LoadedPlugins = {
  plugins: PluginStatus[];
  skillSources: SkillSource[];
  /** Folders of agent definitions (`<plugin>/agents/*.md`), in plugin order. */
  agentSources: SkillSource[];
  commands: Map<string, PluginCommand>;
  hooks: HooksConfig | undefined;
  mcpServers: Record<string, McpServerConfig>;
};

const COMMAND_NAME = /^[a-z0-9_]{1,32}$/;

export function loadPlugins(dir: string, config: PluginsConfig, reserved: { commands: ReadonlySet<string>; mcpServers: ReadonlySet<string> }): LoadedPlugins {
  const loaded: LoadedPlugins = { plugins: [], skillSources: [], agentSources: [], commands: new Map(), hooks: undefined, mcpServers: {} };
  if (!existsSync(dir)) return loaded;
  const folders = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.isSymbolicLink())
    .map((entry) => entry.name)
    .sort();
  for (const folder of folders) {
    const pluginDir = join(dir, folder);
    const empty = { skills: 0, commands: [], hooks: 0, mcpServers: [] };
    const manifest = readManifest(pluginDir);
    if ('error' in manifest) {
      loaded.plugins.push({ name: folder, dir: pluginDir, state: 'broken', reason: manifest.error, contributes: empty });
      continue;
    }
    const { name } = manifest;
    const on = !config.disabled.includes(name) && (manifest.enabled || config.enabled.includes(name));
    const base = { name, dir: pluginDir, version: manifest.version, description: manifest.description };
    if (!on) {
      const reason = config.disabled.includes(name) ? 'turned off in plugins.disabled' : 'off by default; add it to plugins.enabled';
      loaded.plugins.push({ ...base, state: 'disabled', reason, contributes: empty });
      continue;
    }
    try {
      const commands = readCommands(pluginDir, name);
      const clash = commands.find((command) => reserved.commands.has(command.name) || loaded.commands.has(command.name));
      if (clash) throw new Error(`its command /${clash.name} is already taken; rename commands/${clash.name}.md`);
      const servers = Object.keys(manifest.mcp_servers ?? {});
      const serverClash = servers.find((server) => reserved.mcpServers.has(server) || server in loaded.mcpServers);
      if (serverClash) throw new Error(`its MCP server "${serverClash}" has the name of one already configured; rename it in plugin.json`);

      const skillsDir = join(pluginDir, 'skills');
      const skills = existsSync(skillsDir) ? readdirSync(skillsDir).filter((entry) => existsSync(join(skillsDir, entry, 'SKILL.md'))).length : 0;
      if (skills) loaded.skillSources.push({ origin: `plugin ${name}`, dir: skillsDir });
      if (existsSync(join(pluginDir, 'agents'))) loaded.agentSources.push({ origin: `plugin ${name}`, dir: join(pluginDir, 'agents') });
      for (const command of commands) loaded.commands.set(command.name, command);
      Object.assign(loaded.mcpServers, manifest.mcp_servers ?? {});
      const hookCount = Object.values(manifest.hooks ?? {}).reduce((count, hooks) => count + hooks.length, 0);
      if (manifest.hooks) loaded.hooks = mergeHooks(loaded.hooks, manifest.hooks);
      loaded.plugins.push({ ...base, state: 'enabled', contributes: { skills, commands: commands.map((command) => command.name), hooks: hookCount, mcpServers: servers } });
    } catch (error) {
      loaded.plugins.push({ ...base, state: 'broken', reason: errorMessage(error), contributes: empty });
    }
  }
  return loaded;
}

function readManifest(pluginDir: string): z.output<typeof pluginManifestSchema> | { error: string } {
  const path = join(pluginDir, 'plugin.json');
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { error: missing ? `${path} is missing` : `${path} is not valid JSON (${errorMessage(error)})` };
  }
  const parsed = pluginManifestSchema.safeParse(withPluginDir(data, pluginDir));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join('.') || '(manifest)';
  const message = issue?.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : (issue?.message ?? 'invalid');
  return { error: `${path}: field "${where}": ${message}` };
}

/** `${PLUGIN_DIR}` in any string of the manifest (a hook command, a server's command or args) is the plugin's folder. */
function withPluginDir(value: unknown, pluginDir: string): unknown {
  if (typeof value === 'string') return value.replaceAll('${PLUGIN_DIR}', pluginDir);
  if (Array.isArray(value)) return value.map((item) => withPluginDir(item, pluginDir));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withPluginDir(item, pluginDir)]));
  }
  return value;
}

/** `commands/<name>.md`: optional front matter with `description`, then the prompt; `$ARGUMENTS` is replaced. */
function readCommands(pluginDir: string, plugin: string): PluginCommand[] {
  const dir = join(pluginDir, 'commands');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => {
      const name = file.slice(0, -3).toLowerCase();
      if (!COMMAND_NAME.test(name)) throw new Error(`commands/${file}: a command name is lowercase letters, digits and "_" (up to 32)`);
      const text = readFileSync(join(dir, file), 'utf8');
      const match = FRONT_MATTER.exec(text);
      let description = `From the ${plugin} plugin`;
      if (match) {
        let front: unknown;
        try {
          front = parseYaml(match[1] as string, 2);
        } catch (error) {
          throw new Error(`commands/${file}: the front matter is not valid YAML (${errorMessage(error)})`);
        }
        const given = typeof front === 'object' && front !== null && 'description' in front ? front.description : undefined;
        if (typeof given === 'string' && given.trim()) description = given.trim();
      }
      const template = (match ? text.slice(match[0].length) : text).trim();
      if (!template) throw new Error(`commands/${file} is empty`);
      return { name, description, template, plugin };
    });
}

/** The prompt a plugin command sends: its template with `$ARGUMENTS` filled in (or the arguments appended). */
export function expandCommand(command: PluginCommand, args: string): string {
  if (command.template.includes('$ARGUMENTS')) return command.template.replaceAll('$ARGUMENTS', args);
  return args ? `${command.template}\n\n${args}` : command.template;
}

/** `hob plugins list` and the like. */
export function describePlugins(plugins: PluginStatus[], dir: string): string {
  if (plugins.length === 0) return `No plugins in ${dir}. A plugin is a folder there with a plugin.json (see the README, "Extensions").`;
  return plugins
    .map((plugin) => {
      const head = `${plugin.name}${plugin.version ? ` ${plugin.version}` : ''}: ${plugin.state}${plugin.reason ? ` — ${plugin.reason}` : ''}`;
      if (plugin.state !== 'enabled') return head;
      const { skills, commands, hooks, mcpServers } = plugin.contributes;
      const parts = [
        skills ? `${skills} skill${skills === 1 ? '' : 's'}` : '',
        commands.length ? `commands ${commands.map((command) => `/${command}`).join(', ')}` : '',
        hooks ? `${hooks} hook${hooks === 1 ? '' : 's'}` : '',
        mcpServers.length ? `MCP ${mcpServers.join(', ')}` : '',
      ].filter(Boolean);
      return `${head}${plugin.description ? `\n  ${plugin.description}` : ''}${parts.length ? `\n  ${parts.join('; ')}` : ''}`;
    })
    .join('\n');
}
