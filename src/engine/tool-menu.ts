/**
 * The tool definitions one request carries. In a small window: the tools a conversation needs
 * most, with short descriptions; MCP tools beyond a few (in any window, past a tenth of it);
 * the rest deferred behind tool_search, which names them. A deferred tool the conversation has
 * loaded (through tool_search) or called is sent from then on, until compaction drops the
 * messages that loaded it. Nothing is deferred when tool_search is not registered.
 */
import type { Message } from '../core/messages.js';
import type { ToolSpec } from '../providers/types.js';
import type { ToolSet } from '../tools/tool.js';
import { loadedByToolSearch, TOOL_SEARCH, toolSearchDescription } from '../tools/tool-search.js';
import { estimateTools } from './compaction/tokens.js';
import type { PromptBudget } from './prompt-budget.js';

/** Built-in tools a small window defers: each is rarely needed, or another tool does its work. */
const RARE_TOOLS = new Set([
  'glob', 'grep', 'web_fetch', 'ask_user', 'send_file', 'memory_forget', 'profile_update', 'schedule_list', 'schedule_update', 'schedule_delete',
  // issue 21: handing work off is worth its schema only in a window with room for it
  'agent', 'task_create', 'task_list', 'task_output', 'task_stop',
]);

const isMcp = (name: string): boolean => name.startsWith('mcp__');

/** Short forms are computed once per definition, so the objects (and the prompt cache) stay the same. */
const shortForms = new WeakMap<ToolSpec, ToolSpec>();
const searchSpecs = new Map<string, ToolSpec>();

/** For one list of definitions and one window: whether it may defer any, and the list to send when it may not (every tool but tool_search). */
type Plain = { lean: boolean; mcpTools: number; mcpTokens: number; mayDefer: boolean; specs: ToolSpec[] };
/**
 * By list (the registry hands out the same array until its tools change), the last window
 * seen: shared by every conversation's menu, so a new person's first request finds it made.
 */
const plainByList = new WeakMap<readonly ToolSpec[], Plain>();

export class ToolMenu {
  constructor(private readonly registry: ToolSet) {}

  /** The definitions to send with this history, for this window. */
  specs(budget: PromptBudget, messages: readonly Message[]): ToolSpec[] {
    const all = this.registry.specs();
    const search = all.find((spec) => spec.name === TOOL_SEARCH);
    if (!search) return budget.lean ? all.map(shortSpec) : all;
    // Most requests in a large window defer nothing: then the history need not be read.
    const loaded = this.mayDefer(all, budget) ? loadedTools(messages) : undefined;
    if (!loaded) return plainByList.get(all)?.specs ?? all;
    const eager: ToolSpec[] = [];
    const deferred: string[] = [];
    let mcpCount = 0;
    let mcpTokens = 0;
    for (const spec of all) {
      if (spec === search) continue;
      let send = loaded.has(spec.name);
      if (!send && isMcp(spec.name)) {
        const tokens = estimateTools([budget.lean ? shortSpec(spec) : spec]);
        send = mcpCount < budget.mcpTools && mcpTokens + tokens <= budget.mcpTokens;
        if (send) {
          mcpCount += 1;
          mcpTokens += tokens;
        }
      } else if (!send) {
        send = !(budget.lean && RARE_TOOLS.has(spec.name));
      }
      if (send) eager.push(budget.lean ? shortSpec(spec) : spec);
      else deferred.push(spec.name);
    }
    return deferred.length ? [...eager, searchSpec(search, deferred)] : eager;
  }

  /** Whether this window could defer any of these tools (computed once per list and window, for every conversation). */
  private mayDefer(all: ToolSpec[], budget: PromptBudget): boolean {
    const cached = plainByList.get(all);
    if (cached && cached.lean === budget.lean && cached.mcpTools === budget.mcpTools && cached.mcpTokens === budget.mcpTokens) return cached.mayDefer;
    const mcp = all.filter((spec) => isMcp(spec.name));
    const mayDefer = (budget.lean && all.some((spec) => RARE_TOOLS.has(spec.name))) || mcp.length > budget.mcpTools || estimateTools(budget.lean ? mcp.map(shortSpec) : mcp) > budget.mcpTokens;
    const specs = all.filter((spec) => spec.name !== TOOL_SEARCH).map((spec) => (budget.lean ? shortSpec(spec) : spec));
    plainByList.set(all, { specs, lean: budget.lean, mcpTools: budget.mcpTools, mcpTokens: budget.mcpTokens, mayDefer });
    return mayDefer;
  }
}

/** Deferred tools loaded by a tool_search result or called in this history. */
function loadedTools(messages: readonly Message[]): Set<string> {
  const loaded = new Set<string>();
  const searches = new Set<string>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        loaded.add(block.name);
        if (block.name === TOOL_SEARCH) searches.add(block.id);
      } else if (block.type === 'tool_result' && searches.has(block.toolUseId)) {
        for (const name of loadedByToolSearch(block.content)) loaded.add(name);
      }
    }
  }
  return loaded;
}

function searchSpec(search: ToolSpec, deferred: string[]): ToolSpec {
  const key = deferred.join(',');
  let spec = searchSpecs.get(key);
  if (!spec) {
    spec = { ...search, description: toolSearchDescription(deferred) };
    if (searchSpecs.size > 64) searchSpecs.clear();
    searchSpecs.set(key, spec);
  }
  return spec;
}

/** One sentence of description, and parameter descriptions cut to their first clause. */
export function shortSpec(spec: ToolSpec): ToolSpec {
  let short = shortForms.get(spec);
  if (!short) {
    short = { name: spec.name, description: firstSentence(spec.description, 160), inputSchema: shortSchema(spec.inputSchema) };
    shortForms.set(spec, short);
  }
  return short;
}

function firstSentence(text: string, max: number): string {
  const sentence = /^[\s\S]*?[.!?](?=\s|$)/.exec(text.trim())?.[0] ?? text.trim();
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}

function shortSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'additionalProperties' && value === false) || key === '$schema') continue;
    if (key === 'description' && typeof value === 'string') out[key] = firstSentence(value.split(/[;(]/)[0] ?? value, 60);
    else if (key === 'properties' && typeof value === 'object' && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, shortSchema(property)]));
    } else if (key === 'items' || key === 'anyOf' || key === 'oneOf') {
      out[key] = Array.isArray(value) ? value.map(shortSchema) : shortSchema(value);
    } else out[key] = value;
  }
  return out;
}
