/**
 * Hooks: outside logic (a shell command or an HTTP endpoint) run at six points of a
 * session's life. For tool calls they run before the permission checker, so a hook can
 * veto a call, but no hook can allow what the checker denies.
 *
 * Semantics, decided here:
 * - Hooks of one event run one after another, in configured order (an audit hook placed
 *   before a guard sees every call; order is predictable). The first hook that blocks
 *   stops the rest — later hooks never hear of a call that will not happen.
 * - Success: a command exits 0; an HTTP hook answers 2xx within its timeout.
 * - A failure blocks only with `block_on_failure: true`; otherwise it is logged and ignored.
 *   Blocking means something only for `pre_*` events; for the others `blocked` is advisory.
 * - Claude-Code convention: a `pre_tool_use` command hook that exits with code 2 blocks the
 *   call whatever `block_on_failure` says; its stderr (or stdout) is the reason.
 * - `matcher` is a glob over the tool name (`payload.tool_name`) for the tool events; it is
 *   ignored for the other events. No matcher = every call.
 * - `prompt` and `agent` hooks hand the payload to the model (an agent hook may read files
 *   first) and it answers ok or a reason to block; a "block" verdict blocks whatever
 *   `block_on_failure` says, a model that cannot be reached counts as a failure.
 * - `run()` never throws.
 */
import picomatch from 'picomatch';
import type { HookDefinition, HookJudge, HookOutcome, HooksConfig } from './hook-definitions.js';
import { HOOK_EVENTS, type HookEvent } from './hook-events.js';
import { runCommandHook, runHttpHook } from './hook-executor.js';

export { HOOK_EVENTS, type HookEvent };
export type { AgentHook, CommandHook, HookDefinition, HookJudge, HookOutcome, HooksConfig, HttpHook, ModelHook, PromptHook } from './hook-definitions.js';

export type HookResult = HookOutcome & {
  hook: HookDefinition['type'];
  /** The command or URL, to name the hook in logs and reasons. */
  target: string;
  blocked: boolean;
};

export type HookRunResult = {
  blocked: boolean;
  /** Set when blocked: which hook, why, and what it said. Goes to the model for tool calls. */
  reason?: string;
  results: HookResult[];
};

/** The slice of a pino logger the runner uses. Never given secrets (no headers, no payloads). */
export type HookLogger = { warn(details: Record<string, unknown>, message: string): void };

export type HookRunner = {
  run(event: HookEvent, payload: Record<string, unknown>, signal?: AbortSignal): Promise<HookRunResult>;
  /** True when some hook is configured for the event (lets callers skip building payloads). */
  has(event: HookEvent): boolean;
};

const TOOL_EVENTS: ReadonlySet<HookEvent> = new Set(['pre_tool_use', 'post_tool_use']);

export function createHookRunner(
  config: HooksConfig,
  options: {
    cwd: string;
    fetch?: typeof fetch;
    logger?: HookLogger;
    judge?: HookJudge;
    /** The chat channels' secret variables, kept from command hooks as well (child-env.ts). */
    secretEnv?: readonly string[];
  },
): HookRunner {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  // Compile matchers once: hooks run on every tool call.
  const compiled = new Map<HookDefinition, (name: string) => boolean>();
  for (const hooks of Object.values(config)) {
    for (const hook of hooks ?? []) {
      if (hook.matcher) compiled.set(hook, picomatch(hook.matcher, { dot: true }));
    }
  }

  function applies(hook: HookDefinition, event: HookEvent, payload: Record<string, unknown>): boolean {
    const matches = compiled.get(hook);
    if (!matches || !TOOL_EVENTS.has(event)) return true;
    const toolName = payload.tool_name ?? payload.toolName;
    return typeof toolName === 'string' && matches(toolName);
  }

  async function runOne(
    hook: HookDefinition,
    event: HookEvent,
    payload: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<HookResult> {
    const named = { hook: hook.type, target: targetOf(hook) };
    try {
      const outcome = await execute(hook, event, payload, signal);
      const vetoed = (event === 'pre_tool_use' && hook.type === 'command' && outcome.exitCode === 2) || outcome.verdict === 'block';
      return { ...outcome, ...named, blocked: vetoed || (!outcome.ok && hook.block_on_failure) };
    } catch (error) {
      // Defensive: the executors do not throw, but a hook must never take a run down.
      const failure = `failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`;
      return { ok: false, output: '', failure, ...named, blocked: hook.block_on_failure };
    }
  }

  function execute(
    hook: HookDefinition,
    event: HookEvent,
    payload: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<HookOutcome> {
    switch (hook.type) {
      case 'command':
        return runCommandHook(hook, event, payload, { cwd: options.cwd, signal, secretEnv: options.secretEnv });
      case 'http':
        return runHttpHook(hook, event, payload, { fetch: fetchImpl, signal });
      case 'prompt':
      case 'agent':
        if (!options.judge) return Promise.resolve({ ok: false, output: '', failure: 'cannot run: no model is available to judge it' });
        return options.judge(hook, event, payload, signal);
      default: {
        const unknown: never = hook;
        return Promise.resolve({ ok: false, output: '', failure: `has an unknown type ${JSON.stringify(unknown)}` });
      }
    }
  }

  async function run(event: HookEvent, payload: Record<string, unknown>, signal?: AbortSignal): Promise<HookRunResult> {
    const results: HookResult[] = [];
    // A stopped run must not go ahead with a call whose hooks did not all run.
    const stopped = (): HookRunResult => ({
      blocked: true,
      reason: `the run was stopped before the ${event} hooks finished`,
      results,
    });
    for (const hook of config[event] ?? []) {
      if (signal?.aborted) return stopped();
      if (!applies(hook, event, payload)) continue;
      const result = await runOne(hook, event, payload, signal);
      results.push(result);
      if (result.blocked) return { blocked: true, reason: blockReason(event, result, payload), results };
      if (signal?.aborted) return stopped();
      if (!result.ok) {
        const target = result.hook === 'http' ? redactUrl(result.target) : result.target;
        options.logger?.warn(
          { event, hook: result.hook, target, failure: result.failure, status: result.status, exitCode: result.exitCode },
          'hook failed; ignored because block_on_failure is off',
        );
      }
    }
    return { blocked: false, results };
  }

  return { run, has: (event) => (config[event]?.length ?? 0) > 0 };
}

function targetOf(hook: HookDefinition): string {
  switch (hook.type) {
    case 'command':
      return hook.command;
    case 'http':
      return hook.url;
    case 'prompt':
    case 'agent': {
      const firstLine = hook.prompt.split('\n', 1)[0] ?? '';
      return `${hook.type} hook "${firstLine.length > 60 ? `${firstLine.slice(0, 60)}…` : firstLine}"`;
    }
  }
}

function blockReason(event: HookEvent, result: HookResult, payload: Record<string, unknown>): string {
  const what =
    event === 'pre_tool_use' && typeof payload.tool_name === 'string'
      ? `The ${payload.tool_name} call was blocked by a pre_tool_use hook`
      : `A ${event} hook blocked this`;
  const who = result.hook === 'http' ? `(${redactUrl(result.target)})` : `(${result.target})`;
  if (result.verdict === 'block') return `${what} ${who}: ${result.output || 'no reason given'}`;
  const why = result.exitCode === 2 && result.hook === 'command' ? 'it exited with code 2' : `it ${result.failure ?? 'failed'}`;
  return `${what} ${who}: ${why}${result.output ? `:\n${result.output}` : '.'}`;
}

/** URLs may carry tokens in the query string or userinfo; keep only origin and path. */
function redactUrl(target: string): string {
  try {
    const url = new URL(target);
    return `${url.origin}${url.pathname}`;
  } catch {
    return target;
  }
}
