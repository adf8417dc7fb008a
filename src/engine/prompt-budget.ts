/**
 * What hob always sends — system prompt, persona, memory snapshot, tool definitions, skills
 * list — scaled to the window. A 200,000-token window takes it all; a small one (a local
 * server's 4k–16k) gets the lean prompt: short instructions and tool descriptions, a smaller
 * snapshot and persona, skills by name, and rarely used tools loaded on request (tool_search).
 */

export type PromptBudget = {
  contextWindow: number;
  /** Short system prompt and tool descriptions, rarely used tools deferred. */
  lean: boolean;
  /** Most characters of the memory snapshot (the config's `memory.snapshot_chars` caps it). */
  snapshotChars: number;
  /** Most characters of the persona. */
  personaChars: number;
  /** Skills listed with their descriptions, or by name only. */
  skills: 'full' | 'names';
  /** Most MCP tools sent with their definitions; the rest are loaded by tool_search. */
  mcpTools: number;
  /** Most tokens (estimated) the eager MCP definitions may take together. */
  mcpTokens: number;
};

/** The least window hob holds a conversation in well; `hob doctor` warns below it (4,096 still works, compacting often). */
export const NEEDED_WINDOW = 8_192;

/** Below this a window is small: the lean prompt. */
export const SMALL_WINDOW = 16_384;
/** Below this a window is medium: the full prompt, MCP tools beyond a few deferred. */
const MEDIUM_WINDOW = 65_536;

export function promptBudget(contextWindow: number, snapshotChars = 2_000): PromptBudget {
  // Claude Code's rule for deferring MCP tools: their definitions take over a tenth of the window.
  const mcpTokens = Math.floor(contextWindow / 10);
  if (contextWindow < SMALL_WINDOW) {
    return { contextWindow, lean: true, snapshotChars: Math.min(snapshotChars, 600), personaChars: 600, skills: 'names', mcpTools: 2, mcpTokens };
  }
  if (contextWindow < MEDIUM_WINDOW) {
    return { contextWindow, lean: false, snapshotChars: Math.min(snapshotChars, 1_200), personaChars: 2_000, skills: 'full', mcpTools: 6, mcpTokens };
  }
  return { contextWindow, lean: false, snapshotChars, personaChars: 8_000, skills: 'full', mcpTools: Number.POSITIVE_INFINITY, mcpTokens };
}
