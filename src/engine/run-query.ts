import { PromptTooLongError, errorMessage, type ProviderError } from '../core/errors.js';
import type { AgentEvent, DoneReason } from '../core/events.js';
import { text, toolUses, type Block, type Message, type ToolResultBlock } from '../core/messages.js';
import type { ProviderClient, ProviderEvent, StopReason } from '../providers/types.js';
import { cancelledResult, executeToolCalls, type ToolRunEnv } from './tool-execution.js';

export type QueryParams = ToolRunEnv & {
  provider: ProviderClient;
  system: string;
  /** The history so far, ending with the message to answer. Not mutated. */
  messages: Message[];
  maxTurns: number;
  maxTokens: number;
  /** Text that arrived while the run was busy ("steer"); drained at each tool boundary. */
  drainSteering?: () => string[];
  /**
   * Reactive compaction: called once per turn when the model says the prompt is too long.
   * Returns a shorter history to retry with, or undefined to give up.
   */
  onPromptTooLong?: (messages: Message[]) => Promise<Message[] | Compacted | undefined>;
  /** Automatic compaction before each model request: a shorter history when the prompt would not fit. Must not throw. */
  beforeRequest?: (messages: Message[]) => Promise<Compacted | undefined>;
};

/** A compacted history and the notice the person sees about it. */
export type Compacted = { messages: Message[]; notice?: Extract<AgentEvent, { type: 'compaction' }> };

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
  let compactedThisTurn = false;
  const finish = (reason: DoneReason): AgentEvent => ({ type: 'done', reason, turns });

  while (true) {
    if (signal.aborted) return yield finish('aborted');
    if (turns >= params.maxTurns) {
      yield { type: 'error', message: `Stopped after ${turns} turns (model.max_turns). Send a message to continue.`, retryable: false };
      return yield finish('max_turns');
    }
    turns += 1;

    const compacted = await params.beforeRequest?.(messages);
    if (compacted) {
      messages = [...compacted.messages];
      if (compacted.notice) yield compacted.notice;
    }
    const outcome = yield* streamTurn(params, messages);
    if (outcome.kind === 'aborted') return yield finish('aborted');
    if (outcome.kind === 'prompt_too_long') {
      const shorter = compactedThisTurn ? undefined : await params.onPromptTooLong?.(messages);
      if (shorter) {
        const result = Array.isArray(shorter) ? { messages: shorter } : shorter;
        messages = [...result.messages];
        if (result.notice) yield result.notice;
        compactedThisTurn = true;
        turns -= 1;
        continue;
      }
      yield { type: 'error', message: 'The conversation is too long for the model. Start a new one with /new.', retryable: false };
      return yield finish('error');
    }
    if (outcome.kind === 'failed') {
      yield { type: 'error', message: outcome.message, retryable: outcome.retryable, ...(outcome.detail ? { detail: outcome.detail } : {}) };
      return yield finish('error');
    }
    compactedThisTurn = false;

    const assistant = outcome.message;
    messages.push(assistant);
    yield { type: 'assistant_message', message: assistant };

    const calls = toolUses(assistant);
    if (calls.length === 0) return yield finish(outcome.stopReason === 'max_tokens' ? 'max_tokens' : 'end_turn');

    const results: ToolResultBlock[] = signal.aborted ? calls.map((call) => cancelledResult(call, signal)) : yield* executeToolCalls(calls, params);
    const steered = signal.aborted ? [] : (params.drainSteering?.() ?? []);
    const content: Block[] = [...results, ...steered.map((line) => text(line))];
    const toolMessage: Message = { role: 'user', content };
    messages.push(toolMessage);
    yield { type: 'user_message', message: toolMessage };
  }
}

/** One model call, relaying text as it streams. */
async function* streamTurn(params: QueryParams, messages: Message[]): AsyncGenerator<AgentEvent, TurnOutcome> {
  const { signal } = params.context;
  const request = { system: params.system, messages, tools: params.tools.specs(), maxTokens: params.maxTokens };
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
          yield { type: 'usage', usage: event.usage, model: event.model };
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
