import type { AgentEvent } from '../../src/core/events.js';
import { noHooks, type AlwaysRule, type PermissionGate } from '../../src/engine/ports.js';
import type { QueryParams } from '../../src/engine/run-query.js';
import type { Decision, Interaction, PermissionDecision, PermissionQuery } from '../../src/policy/types.js';
import { ToolRegistry, type AnyTool } from '../../src/tools/tool.js';
import type { ProviderClient } from '../../src/providers/types.js';

import { tempDir } from './temp-dirs.js';

export { tempDir };

/** A permission gate driven by a function, recording "always" rules. */
export function gate(decide: (query: PermissionQuery) => PermissionDecision = () => ({ behavior: 'allow', reason: 'test' })) {
  const always: { userId: string; rule: AlwaysRule }[] = [];
  const queries: PermissionQuery[] = [];
  const permissions: PermissionGate & { always: typeof always; queries: typeof queries } = {
    always,
    queries,
    evaluate: (query) => {
      queries.push(query);
      return decide(query);
    },
    rememberAlways: (userId, rule) => always.push({ userId, rule }),
  };
  return permissions;
}

/** An Interaction that answers every confirm with the given decisions, in order. */
export function answering(...decisions: Decision[]): Interaction & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    confirm: async (request) => {
      asked.push(request.summary);
      return decisions.shift() ?? 'deny';
    },
    choose: async (_question, options) => options[0] ?? '',
  };
}

export type QueryOverrides = Partial<Omit<QueryParams, 'context'>> & { context?: Partial<QueryParams['context']> };

export function queryParams(provider: ProviderClient, tools: AnyTool[], overrides: QueryOverrides = {}): QueryParams {
  const signal = overrides.context?.signal ?? new AbortController().signal;
  return {
    provider,
    system: 'test system prompt',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: new ToolRegistry(tools),
    permissions: gate(),
    hooks: noHooks,
    maxTurns: 10,
    maxTokens: 1000,
    approvalTimeoutSeconds: 300,
    ...overrides,
    context: {
      signal,
      workspace: tempDir(),
      sessionKey: 'test:1',
      userId: 'u1',
      interaction: answering(),
      ...overrides.context,
    },
  };
}

export async function collect(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const all: AgentEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

export function ofType<T extends AgentEvent['type']>(events: AgentEvent[], type: T): Extract<AgentEvent, { type: T }>[] {
  return events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
}
