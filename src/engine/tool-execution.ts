import { mergeGenerators, AsyncQueue } from '../core/async.js';
import { errorMessage } from '../core/errors.js';
import { stopReason } from '../core/shutdown.js';
import type { AgentEvent } from '../core/events.js';
import type { ToolResultBlock, ToolUseBlock } from '../core/messages.js';
import type { Decision } from '../policy/types.js';
import { describeInputError, truncateOutput, type AnyTool, type PermissionTarget, type ToolContext, type ToolSet } from '../tools/tool.js';
import type { AlwaysRule, HookGate, PermissionGate } from './ports.js';

export type ToolRunEnv = {
  tools: ToolSet;
  permissions: PermissionGate;
  hooks: HookGate;
  /** The run's capabilities, minus the per-call signal and progress sink. */
  context: Omit<ToolContext, 'progress'>;
  approvalTimeoutSeconds: number;
  /** Results longer than this are cut with a note (a small window holds less); default MAX_TOOL_OUTPUT_CHARS. */
  maxOutputChars?: number;
};

type CallGenerator = AsyncGenerator<AgentEvent, ToolResultBlock>;

/**
 * Runs one assistant message's tool calls: consecutive read-only calls concurrently, the rest
 * one at a time in order. Returns one result per call, in call order — also when cancelled.
 */
export async function* executeToolCalls(calls: ToolUseBlock[], env: ToolRunEnv): AsyncGenerator<AgentEvent, ToolResultBlock[]> {
  const results: ToolResultBlock[] = [];
  for (const batch of batchByReadOnly(calls, env.tools)) {
    if (batch.length === 1) {
      results.push(yield* runToolCall(batch[0] as ToolUseBlock, env));
    } else {
      results.push(...(yield* mergeGenerators(batch.map((call) => runToolCall(call, env)))));
    }
  }
  const limit = env.maxOutputChars;
  return limit ? results.map((block) => (block.content.length > limit ? { ...block, content: truncateOutput(block.content, limit) } : block)) : results;
}

/** Consecutive read-only calls form one concurrent batch; every other call is a batch of one. */
function batchByReadOnly(calls: ToolUseBlock[], tools: ToolSet): ToolUseBlock[][] {
  const batches: ToolUseBlock[][] = [];
  let readOnlyRun: ToolUseBlock[] = [];
  for (const call of calls) {
    if (isReadOnlyCall(call, tools)) {
      readOnlyRun.push(call);
      continue;
    }
    if (readOnlyRun.length) batches.push(readOnlyRun);
    readOnlyRun = [];
    batches.push([call]);
  }
  if (readOnlyRun.length) batches.push(readOnlyRun);
  return batches;
}

function isReadOnlyCall(call: ToolUseBlock, tools: ToolSet): boolean {
  const tool = tools.get(call.name);
  if (!tool) return true; // answered at once with an error, safe to batch
  const parsed = tool.input.safeParse(call.input);
  return parsed.success ? safeReadOnly(tool, parsed.data) : true;
}

function safeReadOnly(tool: AnyTool, input: unknown): boolean {
  try {
    return tool.readOnly(input);
  } catch {
    return false;
  }
}

const result = (call: ToolUseBlock, content: string, isError: boolean): ToolResultBlock => ({
  type: 'tool_result',
  toolUseId: call.id,
  content: truncateOutput(content),
  isError,
});

/** The result of a call the run was stopped before; a string abort reason says why. */
export function cancelledResult(call: ToolUseBlock, signal?: AbortSignal): ToolResultBlock {
  const why = stopReason(signal, 'the person stopped this run');
  return result(call, `Cancelled before the tool finished: ${why}. It may or may not have had an effect.`, true);
}

function refused(call: ToolUseBlock, name: string, reason: string, summary = ''): AgentEvent {
  return { type: 'tool_refused', id: call.id, name, summary, reason };
}

/** One call through lookup → validation → permission → hooks → run → post hook. Never throws. */
async function* runToolCall(call: ToolUseBlock, env: ToolRunEnv): CallGenerator {
  const { context } = env;
  if (context.signal.aborted) return cancelledResult(call, context.signal);
  const tool = env.tools.get(call.name);
  if (!tool) {
    yield refused(call, call.name, 'unknown tool');
    return result(call, `Unknown tool "${call.name}". Available tools: ${env.tools.names().join(', ')}.`, true);
  }
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) {
    yield refused(call, tool.name, 'invalid input');
    return result(call, describeInputError(tool.name, parsed.error), true);
  }
  const input = parsed.data;
  const target = safeTarget(tool, input);
  const summary = summarize(tool.name, target, input);
  const readOnly = safeReadOnly(tool, input);

  const decision = env.permissions.evaluate({ toolName: tool.name, readOnly, ...target, userId: context.userId, trusted: context.interaction.trusted });
  if (decision.behavior === 'deny') {
    yield refused(call, tool.name, `denied: ${decision.reason}`, summary);
    return result(call, `Permission denied: ${decision.reason}`, true);
  }
  if (decision.behavior === 'ask') {
    yield { type: 'approval_requested', id: call.id, name: tool.name, summary };
    const answer = await askPerson(env, call, summary, decision.reason);
    if (context.signal.aborted) {
      // Stopped while waiting (by /stop or a shutdown): not the person's "no".
      yield refused(call, tool.name, 'stopped before an answer', summary);
      return result(call, `Not run: ${stopReason(context.signal, 'the run was stopped')} while this call waited for approval. Call it again if it is still needed.`, true);
    }
    const refusal = refusalText(answer, env.approvalTimeoutSeconds);
    if (refusal) {
      yield refused(call, tool.name, answer === 'timeout' ? 'no answer in time' : 'not approved', summary);
      return result(call, refusal, true);
    }
    if (answer === 'allow_always') env.permissions.rememberAlways(context.userId, alwaysRuleFor(tool.name, target));
  }

  const pre = await env.hooks.run('pre_tool_use', { tool_name: tool.name, tool_input: input, session_key: context.sessionKey }, context.signal);
  if (pre.blocked) {
    yield refused(call, tool.name, 'blocked by a pre_tool_use hook', summary);
    return result(call, `Blocked by a pre_tool_use hook: ${pre.reason ?? 'no reason given'}`, true);
  }

  yield { type: 'tool_started', id: call.id, name: tool.name, input, summary };
  const started = performance.now();
  const outcome = yield* runWithProgress(tool, input, call, env);
  yield {
    type: 'tool_finished',
    id: call.id,
    name: tool.name,
    content: outcome.content,
    isError: outcome.isError,
    durationMs: performance.now() - started,
  };
  await env.hooks.run('post_tool_use', {
    tool_name: tool.name,
    tool_input: input,
    tool_output: outcome.content,
    is_error: outcome.isError,
    session_key: context.sessionKey,
  });
  return outcome;
}

/** Runs the tool while relaying its progress lines (and the events of a worker it drives) as events. */
async function* runWithProgress(tool: AnyTool, input: unknown, call: ToolUseBlock, env: ToolRunEnv): CallGenerator {
  const progress = new AsyncQueue<AgentEvent>();
  const running = tool
    .run(input, { ...env.context, progress: (line) => progress.push({ type: 'tool_progress', id: call.id, text: line }), relay: (event) => progress.push(event) })
    .then(
      (output) => (typeof output === 'string' ? result(call, output, false) : result(call, output.content, output.isError ?? false)),
      (error: unknown) =>
        env.context.signal.aborted ? cancelledResult(call, env.context.signal) : result(call, `The ${tool.name} tool failed: ${errorMessage(error)}`, true),
    )
    .finally(() => progress.close());
  for await (const event of progress) yield event;
  return await running;
}

async function askPerson(env: ToolRunEnv, call: ToolUseBlock, summary: string, reason: string): Promise<Decision> {
  try {
    return await env.context.interaction.confirm(
      {
        id: '',
        sessionKey: env.context.sessionKey,
        toolUseId: call.id,
        requesterId: env.context.userId,
        toolName: call.name,
        input: call.input,
        summary,
        reason,
      },
      env.context.signal,
    );
  } catch {
    return 'deny'; // a failing approval path fails closed
  }
}

function refusalText(decision: Decision, timeoutSeconds: number): string | undefined {
  switch (decision) {
    case 'allow_once':
    case 'allow_always':
      return undefined;
    case 'deny':
      return 'The person denied permission for this call. Do not retry it; ask them what they want instead.';
    case 'timeout':
      return `Nobody answered the approval request within ${timeoutSeconds} seconds, so the call was not run.`;
  }
}

function alwaysRuleFor(toolName: string, target: PermissionTarget): AlwaysRule {
  if (target.command !== undefined) return { toolName, command: target.command };
  if (target.path !== undefined) return { toolName, pathPrefix: target.path };
  return { toolName };
}

function safeTarget(tool: AnyTool, input: unknown): PermissionTarget {
  try {
    return tool.target?.(input) ?? {};
  } catch {
    return {};
  }
}

/** The full command or path (never truncated here); JSON input for other tools. */
function summarize(toolName: string, target: PermissionTarget, input: unknown): string {
  if (target.command !== undefined) return target.command;
  if (target.path !== undefined) return target.path;
  return `${toolName} ${JSON.stringify(input)}`;
}
