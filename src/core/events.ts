import type { Message, Usage } from './messages.js';

/** Why a run ended. */
export type DoneReason = 'end_turn' | 'max_turns' | 'aborted' | 'error' | 'max_tokens';

/**
 * Everything runQuery() yields, as one tagged union. Consumers `switch` on `type` and end
 * with `assertNever(event)`, so a new event kind is a compile error where it is not handled.
 */
export type AgentEvent =
  | { type: 'text_delta'; text: string }
  /** A complete assistant message, appended to history. */
  | { type: 'assistant_message'; message: Message }
  /** A user-role message the loop appended: tool results, or text steered in mid-run. */
  | { type: 'user_message'; message: Message }
  /** `worker` names the worker (an `agent` call) whose call this is, relayed up to the run that started it. */
  | { type: 'tool_started'; id: string; name: string; input: unknown; summary: string; worker?: string }
  | { type: 'tool_progress'; id: string; text: string }
  | { type: 'tool_finished'; id: string; name: string; content: string; isError: boolean; durationMs: number; worker?: string }
  | { type: 'approval_requested'; id: string; name: string; summary: string; worker?: string }
  /** A call that did not run: unknown tool, bad input, denied, not approved, or blocked by a hook. */
  | { type: 'tool_refused'; id: string; name: string; summary: string; reason: string; worker?: string }
  | { type: 'compaction'; level: number; tokensBefore: number; tokensAfter: number }
  /** What the request cost; `estimated` is hob's own count of its prompt before it was sent, when it made one. */
  | { type: 'usage'; usage: Usage; model: string; estimated?: number }
  /** The model endpoint is being retried after a transient failure. */
  | { type: 'retry'; attempt: number; delayMs: number; message: string }
  /** `message` is one plain sentence for anyone in the chat; `detail` the raw cause, for the owner and the log. */
  | { type: 'error'; message: string; retryable: boolean; detail?: string }
  | { type: 'done'; reason: DoneReason; turns: number };

export function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}
