/**
 * Agent definitions: what kind of worker an `agent` call may start. One Markdown file each,
 * `<dir>/<name>.md`, YAML front matter (name, description, tools, disallowed_tools, model,
 * max_turns, permission_mode) and a body of instructions the worker gets as its system
 * prompt. They come from three places, in this order — bundled with hob (`agents/`), from
 * enabled plugins (`<plugin>/agents/`), the person's own in `data_dir/agents/` — a later one
 * replacing an earlier one of the same name. A broken file is reported and skipped.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { bundledFolder } from '../../core/bundled.js';
import { FrontMatterError, readFrontMatterFile } from '../../core/front-matter.js';
import { errorMessage } from '../../core/errors.js';
import type { PermissionMode } from '../../policy/permissions.js';

const KEBAB = 'expected a kebab-case name like "researcher" (lowercase letters, digits and "-")';
const TOOL_LIST = 'expected a list of tool names, like [read_file, grep]';

const definitionSchema = z.strictObject({
  name: z.string({ error: KEBAB }).regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: KEBAB }).max(64, { error: KEBAB }),
  description: z
    .string({ error: 'expected a one-line description of when to use this agent' })
    .trim()
    .min(1, { error: 'expected a one-line description of when to use this agent' })
    .refine((text) => !text.includes('\n'), { error: 'expected one line (the system prompt lists it)' }),
  tools: z.array(z.string({ error: TOOL_LIST }), { error: TOOL_LIST }).optional(),
  disallowed_tools: z.array(z.string({ error: TOOL_LIST }), { error: TOOL_LIST }).default([]),
  model: z.string({ error: 'expected a model name' }).min(1).optional(),
  max_turns: z.int({ error: 'expected a whole number of turns, 1 to 200' }).min(1).max(200).optional(),
  permission_mode: z.enum(['plan', 'default', 'full_auto'], { error: 'expected plan, default or full_auto' }).optional(),
});

export type AgentDefinition = {
  name: string;
  description: string;
  /** The tools it may use (never more than the caller may); undefined: read-only calls of the caller's tools. */
  tools: string[] | undefined;
  disallowedTools: string[];
  model: string | undefined;
  maxTurns: number | undefined;
  /** Must be no looser than the caller's mode; the call is refused otherwise. */
  permissionMode: PermissionMode | undefined;
  /** Instructions for the worker (its system prompt). */
  body: string;
  /** `bundled`, `plugin <name>` or `yours`. */
  origin: string;
  path: string;
};

export type AgentSource = { origin: string; dir: string };

export type AgentCatalog = {
  list(): AgentDefinition[];
  get(name: string): AgentDefinition | undefined;
  /** Problems found while loading, each naming the file (and field). */
  problems: string[];
};

export function readAgentFile(path: string, origin: string): AgentDefinition {
  const { data, body } = readFrontMatterFile(path, definitionSchema, 'name:, description:');
  return {
    name: data.name,
    description: data.description,
    tools: data.tools,
    disallowedTools: data.disallowed_tools,
    model: data.model,
    maxTurns: data.max_turns,
    permissionMode: data.permission_mode,
    body,
    origin,
    path,
  };
}

export function loadAgentDefinitions(sources: AgentSource[]): AgentCatalog {
  const agents = new Map<string, AgentDefinition>();
  const problems: string[] = [];
  for (const source of sources) {
    if (!existsSync(source.dir)) continue;
    let files: string[];
    try {
      files = readdirSync(source.dir).filter((file) => file.endsWith('.md')).sort();
    } catch (error) {
      problems.push(`${source.dir}: cannot be listed (${errorMessage(error)})`);
      continue;
    }
    for (const file of files) {
      const path = join(source.dir, file);
      try {
        const agent = readAgentFile(path, source.origin);
        if (`${agent.name}.md` !== file) problems.push(`${path}: front matter field "name" is "${agent.name}" but the file is "${file}"; using "${agent.name}"`);
        agents.set(agent.name, agent);
      } catch (error) {
        problems.push(error instanceof FrontMatterError ? error.message : `${path}: ${errorMessage(error)}`);
      }
    }
  }
  const sorted = [...agents.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { list: () => sorted, get: (name) => agents.get(name), problems };
}

/** The repository's top-level `agents/` folder. */
export function bundledAgentsDir(from = import.meta.url): string | undefined {
  return bundledFolder('agents', from);
}

/** The system prompt's part: each agent's name and description (or, for a small window, names only). */
export function agentsPromptSection(agents: AgentDefinition[], namesOnly = false): string | undefined {
  if (agents.length === 0) return undefined;
  if (namesOnly) return `Agents (start one with the agent tool): ${agents.map((agent) => agent.name).join(', ')}.`;
  return [
    'Agents (workers you can hand a self-contained piece of work with the agent tool; they see only the prompt you write):',
    ...agents.map((agent) => `- ${agent.name}: ${agent.description}`),
  ].join('\n');
}

/** Permission modes from the tightest to the loosest. */
const MODE_ORDER: readonly PermissionMode[] = ['plan', 'default', 'full_auto'];

/** Whether `mode` lets through more than `caller` does. */
export function looserThan(mode: PermissionMode, caller: PermissionMode): boolean {
  return MODE_ORDER.indexOf(mode) > MODE_ORDER.indexOf(caller);
}
