import { PromptTooLongError, errorMessage, type ProviderError } from '../core/errors.js';
import type { AgentEvent, DoneReason } from '../core/events.js';
import { text, toolUses, type Block, type Message, type ToolResultBlock } from '../core/messages.js';
import type { ProviderClient, ProviderEvent, StopReason, ToolSpec } from '../providers/types.js';
import { cancelledResult, executeToolCalls, type ToolRunEnv } from './tool-execution.js';

/** What one run works on, as data: the model, the prompt, the tools and their gates, the limits. */
export type LoopInput = ToolRunEnv & {
  provider: ProviderClient;
  system: string;
  /** The history so far, ending with the message to answer. Not mutated. */
  messages: Message[];
  maxTurns: number;
  maxTokens: number;
};

/**
 * What the loop asks of whoever runs it, at the three points of a turn where only they know
 * the answer. Every member is optional: a bare run (a test, a headless worker) does without.
 * A conversation's engine answers from its session (session-run.ts, compaction-handoff.ts).
 */
export type LoopPort = {
  /** Text that arrived while the run was busy ("steer"); drained at each tool boundary. */
  drainSteering?(): string[];
  /** Before each model request: a shorter history when the prompt would not fit, and what to send it with. Must not throw. */
  beforeRequest?(messages: Message[]): Promise<RequestPlan | undefined>;
  /**
   * Reactive compaction: called when the model says the prompt is too long (again after each
   * retry, a few times a turn, also after an automatic compaction). Returns a shorter history,
   * or a plan, to retry with; or undefined to give up.
   */
  onPromptTooLong?(messages: Message[], error: PromptTooLongError): Promise<Message[] | RequestPlan | undefined>;
};

export type QueryParams = LoopInput & LoopPort;

/** A compacted history and the notice the person sees about it. */
export type Compacted = { messages: Message[]; notice?: Extract<AgentEvent, { type: 'compaction' }> };

/** How one request goes out. Every field is optional: what is missing stays as the params say. */
export type RequestPlan = Partial<Compacted> & {
  /** The tool definitions the model sees (default: every registered tool). */
  tools?: ToolSpec[];
  /** max_tokens of this request (default: the params' maxTokens). */
  maxTokens?: number;
  /** hob's count of the prompt it is about to send. */
  promptTokens?: number;
  /** Tool results longer than this are cut (a small window holds less). */
  toolOutputChars?: number;
  /** The request cannot be sent: this sentence is the answer instead. */
  refusal?: string;
};

/** Reactive compactions in one turn before the run gives up. */
const REACTIVE_ATTEMPTS = 3;

type TurnOutcome =
  | { kind: 'message'; message: Message; stopReason: StopReason }
  | { kind: 'prompt_too_long'; error: PromptTooLongError }
  | { kind: 'failed'; message: string; retryable: boolean; detail?: string }
  | { kind: 'aborted' };

/**
 * The agent loop, and the only one: call the model, run the tools it asks for, feed the
 * results back, until it answers without tools, the turn limit is hit, or the run is
 * cancelled. Yields every event; never throws.
 */
export async function* runQuery(params: QueryParams): AsyncGenerator<AgentEvent, void> {
  const { signal } = params.context;
  let messages = [...params.messages];
  let turns = 0;
  let reactive = 0;
  const finish = (reason: DoneReason): AgentEvent => ({ type: 'done', reason, turns });

  while (true) {
    if (signal.aborted) return yield finish('aborted');
    if (turns >= params.maxTurns) {
      yield { type: 'error', message: `Stopped after ${turns} turns (model.max_turns). Send a message to continue.`, retryable: false };
      return yield finish('max_turns');
    }
    turns += 1;

    let plan = await params.beforeRequest?.(messages);
    if (plan?.messages) messages = [...plan.messages];
    if (plan?.notice) yield plan.notice;
    if (plan?.refusal) return yield* answerInstead(plan.refusal, finish);
    const outcome = yield* streamTurn(params, messages, plan);
    if (outcome.kind === 'aborted') return yield finish('aborted');
    if (outcome.kind === 'prompt_too_long') {
      reactive += 1;
      const shorter = reactive <= REACTIVE_ATTEMPTS ? await params.onPromptTooLong?.(messages, outcome.error) : undefined;
      plan = Array.isArray(shorter) ? { messages: shorter } : shorter;
      if (plan?.messages) messages = [...plan.messages];
      if (plan?.notice) yield plan.notice;
      if (plan?.refusal) return yield* answerInstead(plan.refusal, finish);
      if (plan) {
        turns -= 1;
        continue;
      }
      yield { type: 'error', message: 'The conversation is too long for the model, even after compacting it. Start a new one with /new.', retryable: false };
      return yield finish('error');
    }
    if (outcome.kind === 'failed') {
      yield { type: 'error', message: outcome.message, retryable: outcome.retryable, ...(outcome.detail ? { detail: outcome.detail } : {}) };
      return yield finish('error');
    }
    reactive = 0;

    const assistant = outcome.message;
    messages.push(assistant);
    yield { type: 'assistant_message', message: assistant };

    const calls = toolUses(assistant);
    if (calls.length === 0) return yield finish(outcome.stopReason === 'max_tokens' ? 'max_tokens' : 'end_turn');

    const env = plan?.toolOutputChars ? { ...params, maxOutputChars: plan.toolOutputChars } : params;
    const results: ToolResultBlock[] = signal.aborted ? calls.map((call) => cancelledResult(call, signal)) : yield* executeToolCalls(calls, env);
    const steered = signal.aborted ? [] : (params.drainSteering?.() ?? []);
    const content: Block[] = [...results, ...steered.map((line) => text(line))];
    const toolMessage: Message = { role: 'user', content };
    messages.push(toolMessage);
    yield { type: 'user_message', message: toolMessage };
  }
}

/** The run's answer when no request can be sent: said as the model's answer would be, and stored as one. */
async function* answerInstead(sentence: string, finish: (reason: DoneReason) => AgentEvent): AsyncGenerator<AgentEvent, void> {
  yield { type: 'text_delta', text: sentence };
  yield { type: 'assistant_message', message: { role: 'assistant', content: [text(sentence)] } };
  yield finish('end_turn');
}

/** One model call, relaying text as it streams. */
async function* streamTurn(params: QueryParams, messages: Message[], plan?: RequestPlan): AsyncGenerator<AgentEvent, TurnOutcome> {
  const { signal } = params.context;
  const request = { system: params.system, messages, tools: plan?.tools ?? params.tools.specs(), maxTokens: plan?.maxTokens ?? params.maxTokens };
  let event: ProviderEvent;
  try {
    for await (event of params.provider.stream(request, signal)) {
      switch (event.type) {
        case 'text_delta':
          yield { type: 'text_delta', text: event.text };
          break;
        case 'tool_use':
          break; // carried whole in the final message
        case 'retry':
          yield { type: 'retry', attempt: event.attempt, delayMs: event.delayMs, message: event.error.message };
          break;
        case 'done':
          yield { type: 'usage', usage: event.usage, model: event.model, ...(plan?.promptTokens ? { estimated: plan.promptTokens } : {}) };
          return { kind: 'message', message: event.message, stopReason: event.stopReason };
        case 'error':
          if (signal.aborted) return { kind: 'aborted' };
          if (event.error instanceof PromptTooLongError) return { kind: 'prompt_too_long', error: event.error };
          return { kind: 'failed', message: modelFailure(event.error), detail: event.error.message, retryable: event.error.retryable };
      }
    }
  } catch (error) {
    // Providers must not throw; if one does anyway, the run still ends cleanly.
    if (signal.aborted) return { kind: 'aborted' };
    return { kind: 'failed', message: 'The model request failed on hob\'s side. The owner can find the details in hob\'s log.', detail: errorMessage(error), retryable: false };
  }
  if (signal.aborted) return { kind: 'aborted' };
  return { kind: 'failed', message: 'The model stream ended without a final message.', retryable: true };
}

/** A failed model call in one plain sentence: what happened and what to do, no API jargon. */
function modelFailure(error: ProviderError): string {
  if (error.retryable) return 'The model is not answering right now (it is overloaded or unreachable). Please try again in a minute.';
  if (error.status === 401 || error.status === 403) return "The model service refused hob's API key, so I cannot answer. The owner can find the details in hob's log.";
  return `The model service turned the request down${error.status ? ` (HTTP ${error.status})` : ''}. The owner can find the details in hob's log.`;
}
