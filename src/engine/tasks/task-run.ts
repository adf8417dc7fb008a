/**
 * One background task's run: a headless turn of its own session (`<platform>:task:<id>`),
 * apart from the conversation that started it. Nobody is asked anything: a call that would
 * need an approval is denied and the result says what was not done. Its limits are a time
 * limit and a token budget; what it spends is stored as it goes.
 */
import type { AgentEvent } from '../../core/events.js';
import { messageText, toolUses } from '../../core/messages.js';
import { SHUTDOWN_REASON } from '../../core/shutdown.js';
import type { Interaction } from '../../policy/types.js';
import type { TaskEnd, TaskRow, TaskSpend } from '../../store/tasks.js';
import type { QueryEngine, SubmitOptions } from '../query-engine.js';
import { RunTally } from '../run-tally.js';

export const STOPPED_BY_PERSON = 'stopped by the person';
export const TIME_LIMIT = 'it reached its time limit';
export const TOKEN_LIMIT = 'it reached its token budget';

export type TaskRunInput = {
  task: TaskRow;
  engine: QueryEngine;
  signal: AbortSignal;
  /** Abort with a reason (the token budget). */
  abort(reason: string): void;
  maxTokens: number;
  /** Whether full_auto applies to the person who started it. */
  trusted: boolean;
  /** After each model request and tool call. */
  onSpend(spend: TaskSpend): void;
  /** What the task has written so far (for task_output while it runs). */
  onText(text: string): void;
};

/** How the run ended; undefined when hob is shutting down (the task stays open and resumes at the next start). */
export async function runTask(input: TaskRunInput): Promise<TaskEnd | undefined> {
  const { task, engine, signal } = input;
  const denied: string[] = [];
  const interaction: Interaction = {
    trusted: input.trusted,
    confirm: async (request) => {
      denied.push(request.summary);
      return 'deny';
    },
    choose: async () => '(this is a background task: nobody is here to answer; continue without an answer)',
  };
  const options: SubmitOptions = { userId: task.userId, interaction, signal, interactive: false };
  const base: TaskSpend = { toolUses: task.toolUses, inputTokens: task.inputTokens, outputTokens: task.outputTokens, costUsd: task.costUsd };
  const previous = engine.status().costUsd;
  const tally = new RunTally(lastSaid(engine));
  const spent = (): TaskSpend => ({
    toolUses: base.toolUses + tally.toolUses,
    inputTokens: base.inputTokens + tally.usage.inputTokens + tally.usage.cacheReadTokens + tally.usage.cacheWriteTokens,
    outputTokens: base.outputTokens + tally.usage.outputTokens,
    costUsd: base.costUsd + engine.status().costUsd - previous,
  });
  const plan = resumePlan(engine, task);
  if (plan.kind === 'done') return { ...base, status: 'completed', result: plan.answer };
  if (plan.kind === 'lost') return { ...base, status: 'interrupted', result: tally.answer || undefined, error: 'hob stopped while it ran, and it could not be resumed' };
  const events: AsyncGenerator<AgentEvent> = plan.kind === 'resume' ? engine.continuePending(options) : engine.submit(task.prompt, options);
  await tally.consume(events, (event) => {
    if (event.type === 'assistant_message' && tally.answer) input.onText(tally.answer);
    if (event.type !== 'tool_started' && event.type !== 'usage') return;
    const spend = spent();
    input.onSpend(spend);
    if (spend.inputTokens + spend.outputTokens > input.maxTokens) input.abort(TOKEN_LIMIT);
  });
  const spend = spent();
  const answer = tally.answer;
  if (signal.aborted) {
    if (signal.reason === SHUTDOWN_REASON) return undefined;
    if (signal.reason === STOPPED_BY_PERSON) return { ...spend, status: 'stopped', result: answer || undefined };
    return { ...spend, status: 'failed', result: answer || undefined, error: typeof signal.reason === 'string' ? signal.reason : 'it was stopped' };
  }
  if (tally.reason !== 'end_turn' && tally.reason !== 'max_tokens') return { ...spend, status: 'failed', result: answer || undefined, error: tally.error ?? `the run ended with ${tally.reason ?? 'an error'}` };
  const refusals = denied.length
    ? `\n\n(Not done: ${denied.map((summary) => `"${summary}"`).join(', ')} needed an approval, and nobody is asked during a background task. An "always allow" rule lets tasks use it.)`
    : '';
  return { ...spend, status: 'completed', result: `${answer || '(The task wrote no answer.)'}${refusals}` };
}

type ResumePlan = { kind: 'start' } | { kind: 'resume' } | { kind: 'done'; answer: string } | { kind: 'lost' };

/**
 * Where a task's session stands: never started (its prompt was not stored yet: start it),
 * cut off mid-run (resume it), answered before hob could record the end (that answer is its
 * result), or something else (report it interrupted, with what it had).
 */
function resumePlan(engine: QueryEngine, task: TaskRow): ResumePlan {
  const history = engine.messages;
  if (history.length === 0) return { kind: 'start' };
  if (engine.hasPendingWork()) return { kind: 'resume' };
  const last = history.at(-1);
  if (last?.role === 'assistant' && toolUses(last).length === 0 && task.status === 'running') {
    const said = messageText(last).trim();
    return said ? { kind: 'done', answer: said } : { kind: 'lost' };
  }
  return { kind: 'lost' };
}

function lastSaid(engine: QueryEngine): string {
  for (let index = engine.messages.length - 1; index >= 0; index--) {
    const message = engine.messages[index];
    if (message?.role === 'assistant' && messageText(message).trim()) return messageText(message).trim();
  }
  return '';
}
