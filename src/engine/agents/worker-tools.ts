/**
 * What a worker may use: a subset of its caller's tools, never more, and never the tools that
 * start more work (a worker cannot start workers or background tasks), behind a permission
 * gate no looser than its caller's.
 */
import type { ToolSpec } from '../../providers/types.js';
import type { PermissionMode } from '../../policy/permissions.js';
import type { AnyTool, ToolSet } from '../../tools/tool.js';
import type { PermissionGate } from '../ports.js';
import type { AgentDefinition } from './definitions.js';

/** Tools that start or steer more work: a worker never gets them, and calling one is refused in words. */
export const COORDINATION_TOOLS: ReadonlySet<string> = new Set(['agent', 'task_create', 'task_list', 'task_output', 'task_stop']);

/** The tools one worker gets: by name; `readOnlyOnly` when nobody named them (then only read-only calls pass). */
export type WorkerToolPlan = { names: string[]; readOnlyOnly: boolean };

/**
 * Which of the caller's tools a worker gets. Without a list (from the call, else its
 * definition) it gets read-only calls of all of them; with one, those tools (the call may
 * narrow its definition's list, never widen it). A name in the call the caller lacks is an
 * error in words.
 */
export function planWorkerTools(caller: ToolSet, definition: AgentDefinition | undefined, requested: string[] | undefined): WorkerToolPlan | { error: string } {
  const available = caller.names().filter((name) => !COORDINATION_TOOLS.has(name));
  const disallowed = new Set(definition?.disallowedTools ?? []);
  const allowed = (name: string) => !disallowed.has(name);
  // A definition is written for any hob: of its tools, those this one lacks are left out. A call's list must be exact.
  const named = requested ?? definition?.tools?.filter((name) => available.includes(name));
  if (!named) return { names: available.filter(allowed), readOnlyOnly: true };
  const coordination = named.filter((name) => COORDINATION_TOOLS.has(name));
  if (coordination.length) return { error: `A worker cannot be given ${coordination.join(', ')}: workers do not start workers or background tasks.` };
  const missing = named.filter((name) => !available.includes(name));
  if (missing.length) return { error: `A worker cannot use ${missing.join(', ')}: it gets only tools you have yourself (${available.join(', ')}).` };
  if (requested && definition?.tools) {
    const wider = requested.filter((name) => !definition.tools?.includes(name));
    if (wider.length) return { error: `The ${definition.name} agent may not use ${wider.join(', ')}; its tools are ${definition.tools.join(', ')}.` };
  }
  const blocked = named.filter((name) => disallowed.has(name));
  if (blocked.length) return { error: `The ${definition?.name ?? ''} agent is not allowed ${blocked.join(', ')} (disallowed_tools in its definition).` };
  return { names: [...new Set(named)], readOnlyOnly: false };
}

/** The refusal a worker (or a background task) reads when it asks for a coordination tool it may not use. */
const NESTED_REFUSAL = 'Refused: you run as a worker or a background task, and cannot start workers or background tasks. Do the work with your own tools, or finish and say what else is needed.';

/** A view of the caller's tools holding only the worker's (looked up live: MCP tools may come and go). */
export class WorkerTools implements ToolSet {
  private cached: { from: ToolSpec[]; specs: ToolSpec[] } | undefined;
  private readonly allowed: ReadonlySet<string>;

  /** `refused`: tools a call to which is answered with the refusal (default: every coordination tool). */
  constructor(
    private readonly caller: ToolSet,
    names: string[],
    private readonly refused: ReadonlySet<string> = COORDINATION_TOOLS,
  ) {
    this.allowed = new Set(names);
  }

  get(name: string): AnyTool | undefined {
    if (this.refused.has(name)) return nestedRefusal(name);
    return this.allowed.has(name) ? this.caller.get(name) : undefined;
  }

  list(): AnyTool[] {
    return this.caller.list().filter((tool) => this.allowed.has(tool.name));
  }

  names(): string[] {
    return this.caller.names().filter((name) => this.allowed.has(name));
  }

  /** Recomputed only when the caller's list changed, so the worker's prompt prefix stays cacheable. */
  specs(): ToolSpec[] {
    const from = this.caller.specs();
    if (this.cached?.from !== from) this.cached = { from, specs: from.filter((spec) => this.allowed.has(spec.name)) };
    return this.cached.specs;
  }
}

/** A stand-in for a coordination tool inside a worker: any call is answered with the refusal. */
function nestedRefusal(name: string): AnyTool {
  return {
    name,
    description: 'Not available to workers.',
    input: { safeParse: (data: unknown) => ({ success: true, data }) } as AnyTool['input'],
    readOnly: () => true,
    run: async () => ({ content: NESTED_REFUSAL, isError: true }),
  };
}

/**
 * The worker's permission gate: its caller's, tightened. A read-only worker is refused every
 * call that writes; a `plan` worker likewise; a `default` worker under a `full_auto` caller
 * is asked about what full_auto would have let through (full_auto is not passed down).
 */
export function workerGate(caller: PermissionGate, mode: PermissionMode, readOnlyOnly: boolean, name: string): PermissionGate {
  return {
    evaluate: (query) => {
      if (!query.readOnly && readOnlyOnly) return { behavior: 'deny', reason: `${name} is a read-only worker: it may look, not change anything. Name the tools it needs in the agent call to let it act` };
      if (!query.readOnly && mode === 'plan') return { behavior: 'deny', reason: `${name} runs in plan mode: it may only read` };
      return caller.evaluate(mode === 'full_auto' ? query : { ...query, trusted: false });
    },
    rememberAlways: (userId, rule) => caller.rememberAlways(userId, rule),
    isSensitivePath: caller.isSensitivePath ? (path, resolved) => caller.isSensitivePath?.(path, resolved) ?? false : undefined,
    mode: () => mode,
  };
}
