/**
 * One worker: a fresh run of the loop with nothing but its prompt — no conversation history,
 * its own tools, gate, turn limit and time limit, and maybe a cheaper model. Its tool calls
 * are relayed to whoever started it, under its name; its approvals go to the same person,
 * naming it. Never throws: every ending is an outcome.
 */
import type { AgentEvent } from '../../core/events.js';
import { text, type Usage } from '../../core/messages.js';
import type { Interaction } from '../../policy/types.js';
import type { ProviderClient } from '../../providers/types.js';
import type { ToolContext, ToolSet } from '../../tools/tool.js';
import type { HookGate, PermissionGate } from '../ports.js';
import { runQuery } from '../run-query.js';
import { RunTally } from '../run-tally.js';

/** Everything one worker runs with. */
export type WorkerRun = {
  /** Shown to the person and in its approvals: the agent definition's name, or "worker". */
  name: string;
  /** Unique per worker: its relayed events' ids start with it. */
  id: string;
  prompt: string;
  system: string;
  provider: ProviderClient;
  tools: ToolSet;
  permissions: PermissionGate;
  hooks: HookGate;
  maxTurns: number;
  maxTokens: number;
  timeoutMs: number;
  approvalTimeoutSeconds: number;
  /** The caller's tool context: its person, chat, workspace and signal (stopping the caller stops the worker). */
  context: Omit<ToolContext, 'progress'>;
  costUsd(model: string, usage: Usage): number;
  /** Receives the worker's tool calls, named, for the caller's progress message. */
  relay?(event: AgentEvent): void;
  /** After each model request: what it has spent so far (stored, so a crash keeps it). */
  onSpend?(spent: WorkerSpend): void;
};

export type WorkerSpend = { toolUses: number; usage: Usage; costUsd: number };

/** How a worker ended: `timed_out` at its time limit, `max_turns` at its turn limit, `stopped` when its caller was. */
export type WorkerStatus = 'completed' | 'failed' | 'stopped' | 'timed_out' | 'max_turns';

export type WorkerOutcome = WorkerSpend & {
  status: WorkerStatus;
  /** Its final answer, or what it had written when it was cut off. */
  text: string;
  error?: string;
  durationMs: number;
};

const TIME_LIMIT = 'the worker reached its time limit';

export async function runWorker(run: WorkerRun): Promise<WorkerOutcome> {
  const started = performance.now();
  const limit = new AbortController();
  const parent = run.context.signal;
  const onParentAbort = () => limit.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  parent.addEventListener('abort', onParentAbort, { once: true });
  const timer = setTimeout(() => limit.abort(TIME_LIMIT), run.timeoutMs);
  const tally = new RunTally();
  let costUsd = 0;
  const spent = (): WorkerSpend => ({ toolUses: tally.toolUses, usage: tally.usage, costUsd });
  try {
    const events = runQuery({
      provider: run.provider,
      system: run.system,
      messages: [{ role: 'user', content: [text(run.prompt)] }],
      tools: run.tools,
      permissions: run.permissions,
      hooks: run.hooks,
      maxTurns: run.maxTurns,
      maxTokens: run.maxTokens,
      approvalTimeoutSeconds: run.approvalTimeoutSeconds,
      context: { ...run.context, signal: limit.signal, interaction: namedInteraction(run.context.interaction, run.name), worker: run.name },
    });
    await tally.consume(events, (event) => {
      switch (event.type) {
        case 'usage':
          costUsd += run.costUsd(event.model, event.usage);
          run.onSpend?.(spent());
          break;
        case 'tool_started':
        case 'tool_finished':
        case 'tool_refused':
        case 'approval_requested':
          run.relay?.({ ...event, id: `${run.id}/${event.id}`, worker: run.name });
          break;
        default:
          break;
      }
    });
  } finally {
    clearTimeout(timer);
    parent.removeEventListener('abort', onParentAbort);
  }
  const { reason, error } = tally;
  const status: WorkerStatus =
    reason === 'end_turn' || reason === 'max_tokens' ? 'completed' : reason === 'max_turns' ? 'max_turns' : reason === 'aborted' ? (limit.signal.reason === TIME_LIMIT ? 'timed_out' : 'stopped') : 'failed';
  return { ...spent(), status, text: tally.said, ...(error && status === 'failed' ? { error } : {}), durationMs: performance.now() - started };
}

/** The caller's way of asking its person, with each approval naming the worker that wants it. */
function namedInteraction(interaction: Interaction, name: string): Interaction {
  return {
    confirm: (request, signal) => interaction.confirm({ ...request, worker: name }, signal),
    choose: (question, options, signal) => interaction.choose(`${name} asks: ${question}`, options, signal),
    ...(interaction.trusted !== undefined ? { trusted: interaction.trusted } : {}),
  };
}

/** The worker's result as its caller reads it: a line of figures, then what it said. */
export function describeOutcome(name: string, outcome: WorkerOutcome): string {
  const tokens = outcome.usage.inputTokens + outcome.usage.cacheReadTokens + outcome.usage.cacheWriteTokens + outcome.usage.outputTokens;
  const head = `[${name}: ${outcome.status} · ${outcome.toolUses} tool use${outcome.toolUses === 1 ? '' : 's'} · ${tokens.toLocaleString('en-US')} tokens · ${(outcome.durationMs / 1000).toFixed(1)} s]`;
  const why: Record<WorkerStatus, string> = {
    completed: '',
    failed: `The worker failed: ${outcome.error ?? 'unknown error'}.`,
    stopped: 'The worker was stopped before it finished.',
    timed_out: 'The worker reached its time limit before it finished.',
    max_turns: 'The worker reached its turn limit before it finished.',
  };
  return [head, why[outcome.status], outcome.text || '(The worker wrote no answer.)'].filter(Boolean).join('\n');
}
