/**
 * `tool_search { query }`: loads the definitions of tools the model does not see yet. In a
 * small window (and for MCP tools beyond a few) hob sends only the tools it needs most and
 * names the rest in this tool's description, as Claude Code does with deferred tools; asked
 * by name (`select:glob,grep`) or by keywords, it answers with their definitions, and from
 * the next request on they are among the tools the model sees.
 */
import { z } from 'zod';
import type { ToolSpec } from '../providers/types.js';
import { defineTool, type AnyTool, type ToolRegistry } from './tool.js';

export const TOOL_SEARCH = 'tool_search';

/** The first line of a result: which tools it loaded (the engine reads it back from the history). */
const LOADED = 'Loaded: ';

const MAX_RESULTS = 5;

/** The tool's description as the model sees it, naming the tools not loaded yet. */
export function toolSearchDescription(deferred: readonly string[]): string {
  return `Load tools that are not loaded yet, then call them. Query "select:name1,name2" for exact names, or keywords. Not loaded: ${deferred.join(', ')}.`;
}

/** The names a tool_search result loaded. */
export function loadedByToolSearch(content: string): string[] {
  if (!content.startsWith(LOADED)) return [];
  const line = content.slice(LOADED.length).split('\n', 1)[0] ?? '';
  return line.replace(/\.$/, '').split(',').map((name) => name.trim()).filter(Boolean);
}

export function toolSearchTool(registry: () => ToolRegistry): AnyTool {
  const tool = defineTool({
    name: TOOL_SEARCH,
    description: toolSearchDescription([]),
    input: z.strictObject({ query: z.string().min(1).describe('"select:name1,name2", or keywords') }),
    readOnly: true,
    async run({ query }) {
      const specs = registry().specs().filter((spec) => spec.name !== TOOL_SEARCH);
      const found = query.startsWith('select:') ? byName(specs, query.slice('select:'.length)) : byKeywords(specs, query);
      if (found.length === 0) return { content: `No tool matches "${query}". Tools: ${specs.map((spec) => spec.name).join(', ')}.`, isError: true };
      return [`${LOADED}${found.map((spec) => spec.name).join(', ')}.`, ...found.map((spec) => `\n## ${spec.name}\n${spec.description}\nInput: ${JSON.stringify(spec.inputSchema)}`)].join('\n');
    },
  });
  return tool as unknown as AnyTool;
}

function byName(specs: ToolSpec[], names: string): ToolSpec[] {
  const wanted = new Set(names.split(',').map((name) => name.trim()).filter(Boolean));
  return specs.filter((spec) => wanted.has(spec.name)).slice(0, MAX_RESULTS);
}

/** Tools whose name or description share the most words with the query. */
function byKeywords(specs: ToolSpec[], query: string): ToolSpec[] {
  const words = query.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 1);
  return specs
    .map((spec) => {
      const name = spec.name.toLowerCase();
      const text = `${name} ${spec.description.toLowerCase()}`;
      return { spec, score: words.reduce((sum, word) => sum + (name.includes(word) ? 3 : text.includes(word) ? 1 : 0), 0) };
    })
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_RESULTS)
    .map((entry) => entry.spec);
}
