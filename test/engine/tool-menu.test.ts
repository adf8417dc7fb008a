import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../src/core/messages.js';
import { promptBudget } from '../../src/engine/prompt-budget.js';
import { ToolMenu } from '../../src/engine/tool-menu.js';
import { builtinTools } from '../../src/tools/builtins.js';
import { defineTool, ToolRegistry, type AnyTool } from '../../src/tools/tool.js';
import { toolSearchTool } from '../../src/tools/tool-search.js';
import { answering } from '../support/engine.js';

/** issue 17: which tool definitions a request carries, by window, and tool_search loading the rest. */

const mcpTool = (server: string, name: string): AnyTool =>
  defineTool({
    name: `mcp__${server}__${name}`,
    description: `[${server}] ${name}: does the ${name} thing on the ${server} server. ${'It has a long description. '.repeat(120)}`,
    input: z.object({ target: z.string().describe('What to act on') }),
    readOnly: true,
    run: async ({ target }) => `${name} ${target}`,
  }) as unknown as AnyTool;

function registry(mcpCount: number): ToolRegistry {
  const tools: ToolRegistry = new ToolRegistry([...builtinTools(), toolSearchTool(() => tools)]);
  tools.replaceGroup('mcp:files', Array.from({ length: mcpCount }, (_, i) => mcpTool('files', `op${String(i).padStart(2, '0')}`)));
  return tools;
}

const names = (specs: { name: string }[]) => specs.map((spec) => spec.name);
const ctx = { signal: new AbortController().signal, workspace: '/tmp', sessionKey: 'k', userId: 'u', interaction: answering(), progress: () => undefined };

describe('the tools a request carries', () => {
  it('in a large window: every built-in and a few MCP servers\' tools whole; MCP tools past a tenth of the window wait behind tool_search', () => {
    const menu = new ToolMenu(registry(40));
    const specs = menu.specs(promptBudget(200_000), []);
    expect(names(specs)).toEqual(expect.arrayContaining(['bash', 'glob', 'grep', 'web_fetch', 'send_file']));
    const mcp = names(specs).filter((name) => name.startsWith('mcp__'));
    expect(mcp.length).toBeGreaterThan(3);
    expect(mcp.length).toBeLessThan(40);
    const search = specs.find((spec) => spec.name === 'tool_search');
    expect(search?.description).toContain('mcp__files__op39');
    // With few MCP tools, nothing waits and tool_search is not sent at all.
    expect(names(new ToolMenu(registry(2)).specs(promptBudget(200_000), []))).not.toContain('tool_search');
  });

  it('in a small window: the tools most needed, with short descriptions; rarely used ones and MCP tools beyond two are named by tool_search', () => {
    const menu = new ToolMenu(registry(5));
    const specs = menu.specs(promptBudget(8_000), []);
    expect(names(specs)).toEqual(expect.arrayContaining(['bash', 'read_file', 'write_file', 'edit_file', 'tool_search']));
    expect(names(specs)).not.toContain('glob');
    expect(names(specs).filter((name) => name.startsWith('mcp__'))).toHaveLength(2);
    expect(specs.find((spec) => spec.name === 'tool_search')?.description).toMatch(/Not loaded: .*glob.*mcp__files__op04/);
    for (const spec of specs.filter((s) => s.name !== 'tool_search')) expect(spec.description.length, spec.name).toBeLessThanOrEqual(160);
    // The same window and list give the same objects: the prompt cache holds between requests.
    expect(menu.specs(promptBudget(8_000), [])).toEqual(specs);
  });

  it('sends a tool from the request after tool_search loaded it (or the model called it), until the history no longer shows it', async () => {
    const tools = registry(5);
    const menu = new ToolMenu(tools);
    const search = tools.get('tool_search') as AnyTool;
    const loaded = String(await search.run({ query: 'select:glob,mcp__files__op04' }, ctx));
    expect(loaded).toMatch(/^Loaded: glob, mcp__files__op04\./);
    expect(loaded).toContain('"pattern"');
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'find the files' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'tool_search', input: { query: 'select:glob,mcp__files__op04' } }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: loaded, isError: false }] },
    ];
    const after = names(menu.specs(promptBudget(8_000), history));
    expect(after).toEqual(expect.arrayContaining(['glob', 'mcp__files__op04']));
    expect(names(menu.specs(promptBudget(8_000), history.slice(0, 1)))).not.toContain('glob');
    // Keywords find tools too.
    expect(String(await search.run({ query: 'search file contents with a regular expression' }, ctx))).toMatch(/^Loaded: .*grep/);
  });
});
