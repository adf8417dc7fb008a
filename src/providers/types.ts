import type { ProviderError } from '../core/errors.js';
import type { Message, Usage } from '../core/messages.js';

/** A tool as the model sees it. */
export type ToolSpec = {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
};

export type ProviderRequest = {
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Overrides the client's own model name (used by the fallback list). */
  model?: string;
};

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'other';

export type ProviderEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  /** The stream finished; `message` is the whole assistant message. */
  | { type: 'done'; message: Message; stopReason: StopReason; usage: Usage; model: string }
  /** The stream failed. `streamed` tells whether any content reached the consumer first. */
  | { type: 'error'; error: ProviderError; streamed: boolean }
  /** A retry is about to happen (emitted by the retry wrapper). */
  | { type: 'retry'; attempt: number; delayMs: number; error: ProviderError };

/**
 * A model endpoint. Contract: `stream` never throws; every failure (HTTP, network, abort,
 * malformed output) arrives as one final `error` event, and a successful stream ends with
 * exactly one `done` event.
 */
export interface ProviderClient {
  readonly provider: string;
  readonly model: string;
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}
