import type { HobConfig } from '../config/schema.js';
import { channelLabel } from './channels.js';
import type { Clock } from '../core/clock.js';
import type { Delegation } from '../engine/delegation.js';
import type { EngineDeps } from '../engine/query-engine.js';
import { promptBudget } from '../engine/prompt-budget.js';
import { buildSystemPrompt } from '../engine/system-prompt.js';
import type { Extensions } from '../extensions.js';
import type { Memory } from '../memory/memory.js';
import type { ToolRegistry } from '../tools/tool.js';
import { TOOL_SEARCH } from '../tools/tool-search.js';

export type AppPromptOptions = {
  config: HobConfig;
  clock: Clock;
  memory: Memory;
  tools: ToolRegistry;
  extensions: Extensions;
  /** Built after the engine's deps (its workers run on them), so asked for when a prompt is. */
  delegation(): Delegation;
  /** Where the person talks from when the session key names no place of its own. */
  channel: string;
};

/** The system prompt of one request: the base prompt, then skills, agents, and this person's memory. */
export function appSystemPrompt(options: AppPromptOptions): EngineDeps['systemPrompt'] {
  const { config, clock, memory, tools, extensions } = options;
  return ({ sessionKey, userId, interactive, sessionId, chatType, contextWindow }) => {
    // issue 17: what is always sent scales with the window.
    const budget = promptBudget(contextWindow, config.memory.snapshot_chars);
    const delegation = options.delegation();
    return buildSystemPrompt({
      now: new Date(clock.now()),
      timezone: memory.timezoneFor(memory.personFor(sessionKey, userId)),
      workspace: config.tools.workspace,
      // tool_search names what it loads itself, and is sent only when something waits for it.
      toolNames: tools.names().filter((name) => name !== TOOL_SEARCH),
      channel: channelName(sessionKey) ?? options.channel,
      interactive,
      lean: budget.lean,
      // Skills first (the same for everyone), then this person's memory and profile. A group
      // conversation not keyed to this person (`:u<id>`) is shared: a shared thread, or group_sessions: shared.
      extra: [
        budget.skills === 'names' ? extensions.skillsPromptBrief : extensions.skillsPrompt,
        budget.skills === 'names' ? delegation.promptBrief : delegation.prompt,
        memory.promptSection({ sessionKey, sessionId, userId, shared: chatType !== undefined && chatType !== 'dm' && !sessionKey.endsWith(`:u${userId}`), budget }),
      ]
        .filter((part) => part)
        .join('\n\n'),
    });
  };
}

/** Sessions no chat channel owns; a channel's own platform is named by its label (app/channels.ts). */
const SESSION_PLACES: Record<string, string> = {
  console: 'a terminal',
  // issue 11: a report's own session; its answer is sent to the person's chat when it ends
  job: 'a scheduled report they set up (nobody reads along; your final answer is sent to them)',
};

function channelName(sessionKey: string): string | undefined {
  const platform = sessionKey.split(':', 1)[0] ?? '';
  return SESSION_PLACES[platform] ?? channelLabel(platform);
}
