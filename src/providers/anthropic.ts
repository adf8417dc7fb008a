/**
 * Anthropic Messages API provider, streaming: hob's messages to the API's params
 * (anthropic-wire.ts), the call (anthropic-http.ts, or the SDK's when its OpenTelemetry spans are
 * asked for: anthropic-sdk.ts), and the raw events folded into hob's. Imported lazily by index.ts.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Block, Message, Usage } from '../core/messages.js';
import { emptyUsage } from '../core/messages.js';
import { asObject, ThinkingMemory, toParams, type WireBlock } from './anthropic-wire.js';
import { leanFetch, leanStreamFetch } from '../core/lean-fetch.js';
import { RequestBody } from './request-body.js';
import { abortedError, parseToolInput, toProviderError, truncatedStreamError, type FailureFacts } from './error-mapping.js';
import { httpMessagesCall, MessagesCallError, type MessagesCall, type RawEvent } from './anthropic-http.js';
import type { ProviderClient, ProviderEvent, ProviderRequest, StopReason } from './types.js';

export type AnthropicProviderOptions = {
  apiKey: string;
  /** API origin, e.g. https://api.anthropic.com (the SDK appends /v1/messages). */
  baseUrl?: string;
  model: string;
  /** Marks the system prompt, the last tool and the newest message as cache breakpoints. */
  promptCaching?: boolean;
  /** How requests are made: core/lean-fetch.ts's, or a fetch a test passes (given text bodies as bytes). */
  fetch?: typeof globalThis.fetch;
};

const PROVIDER = 'Anthropic';

export function createAnthropicProvider(options: AnthropicProviderOptions): ProviderClient {
  const promptCaching = options.promptCaching ?? true;
  const call = { apiKey: options.apiKey, baseUrl: options.baseUrl ?? 'https://api.anthropic.com' };
  // The SDK's OpenTelemetry spans, for a person who runs an OpenTelemetry SDK beside hob and asks
  // for them (ANTHROPIC_OPEN_TELEMETRY, read by the SDK); otherwise hob makes the call itself,
  // reading the answer straight from the socket.
  let messages: MessagesCall | Promise<MessagesCall> =
    process.env.ANTHROPIC_OPEN_TELEMETRY === undefined
      ? httpMessagesCall({ ...call, fetch: options.fetch ? leanFetch(options.fetch) : leanStreamFetch() })
      : import('./anthropic-sdk.js').then(({ sdkMessagesCall }) => sdkMessagesCall({ ...call, fetch: leanFetch(options.fetch) }));
  const thinking = new ThinkingMemory();
  const body = new RequestBody();

  return {
    provider: 'anthropic',
    model: options.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      const model = request.model ?? options.model;
      const turn = new TurnAccumulator(model);
      try {
        if (signal.aborted) throw signal.reason;
        const params = toParams(request, model, promptCaching, thinking);
        if (typeof messages !== 'function') messages = await messages;
        for await (const event of messages(params, body.bytes(params, request.tools), signal)) {
          for (const out of turn.apply(event)) yield out;
        }
        if (signal.aborted) throw signal.reason;
        if (!turn.finished) {
          yield { type: 'error', error: truncatedStreamError(PROVIDER), streamed: turn.streamed };
          return;
        }
        const done = turn.done();
        const replay = turn.replayBlocks();
        if (replay) thinking.remember(replay.toolUseId, model, replay.blocks);
        yield done;
      } catch (error) {
        const mapped = signal.aborted ? abortedError(signal) : toProviderError(factsOf(error));
        yield { type: 'error', error: mapped, streamed: turn.streamed };
      }
    },
  };
}

type OpenBlock =
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; id: string; name: string; json: string }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted_thinking'; data: string };

/** Folds raw stream events into hob events and, at the end, the whole assistant message. */
class TurnAccumulator {
  finished = false;
  streamed = false;
  private readonly open = new Map<number, OpenBlock>();
  /** Every finished block as received, thinking included, by stream index. */
  private readonly received: Array<{ index: number; wire: WireBlock; block?: Block }> = [];
  private usage: Usage = emptyUsage();
  private stopReason: StopReason = 'other';

  constructor(private model: string) {}

  *apply(event: RawEvent): Generator<ProviderEvent> {
    switch (event.type) {
      case 'message_start':
        this.model = event.message.model || this.model;
        this.usage = mergeUsage(this.usage, event.message.usage);
        return;
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') this.open.set(event.index, { kind: 'text', text: block.text });
        else if (block.type === 'tool_use') this.open.set(event.index, { kind: 'tool_use', id: block.id, name: block.name, json: '' });
        else if (block.type === 'thinking') this.open.set(event.index, { kind: 'thinking', thinking: block.thinking, signature: block.signature });
        else if (block.type === 'redacted_thinking') this.open.set(event.index, { kind: 'redacted_thinking', data: block.data });
        // Server-tool blocks are not part of hob's message model; skip them.
        return;
      }
      case 'content_block_delta': {
        const open = this.open.get(event.index);
        const delta = event.delta;
        if (delta.type === 'text_delta' && open?.kind === 'text' && delta.text) {
          open.text += delta.text;
          this.streamed = true;
          yield { type: 'text_delta', text: delta.text };
        } else if (delta.type === 'input_json_delta' && open?.kind === 'tool_use') {
          open.json += delta.partial_json;
        } else if (delta.type === 'thinking_delta' && open?.kind === 'thinking') {
          open.thinking += delta.thinking;
        } else if (delta.type === 'signature_delta' && open?.kind === 'thinking') {
          open.signature += delta.signature;
        }
        return;
      }
      case 'content_block_stop': {
        const open = this.open.get(event.index);
        this.open.delete(event.index);
        if (open) yield* this.close(event.index, open);
        return;
      }
      case 'message_delta':
        this.stopReason = mapStopReason(event.delta.stop_reason);
        this.usage = mergeUsage(this.usage, event.usage);
        return;
      case 'message_stop':
        this.finished = true;
        return;
      default: {
        const unknownEvent: never = event;
        void unknownEvent;
      }
    }
  }

  private *close(index: number, open: OpenBlock): Generator<ProviderEvent> {
    switch (open.kind) {
      case 'text':
        if (open.text) this.received.push({ index, wire: { type: 'text', text: open.text }, block: { type: 'text', text: open.text } });
        return;
      case 'tool_use': {
        const input = parseToolInput(open.json);
        this.received.push({
          index,
          wire: { type: 'tool_use', id: open.id, name: open.name, input: asObject(input) },
          block: { type: 'tool_use', id: open.id, name: open.name, input },
        });
        this.streamed = true;
        yield { type: 'tool_use', id: open.id, name: open.name, input };
        return;
      }
      case 'thinking':
        this.received.push({
          index,
          wire: { type: 'thinking', thinking: open.thinking, signature: open.signature },
          block: { type: 'thinking', thinking: open.thinking, signature: open.signature },
        });
        return;
      case 'redacted_thinking':
        this.received.push({ index, wire: { type: 'redacted_thinking', data: open.data }, block: { type: 'redacted_thinking', data: open.data } });
        return;
      default: {
        const unknownBlock: never = open;
        void unknownBlock;
      }
    }
  }

  private ordered(): Array<{ index: number; wire: WireBlock; block?: Block }> {
    return [...this.received].sort((a, b) => a.index - b.index);
  }

  done(): Extract<ProviderEvent, { type: 'done' }> {
    const content = this.ordered().flatMap((entry) => (entry.block ? [entry.block] : []));
    const message: Message = { role: 'assistant', content };
    return { type: 'done', message, stopReason: this.stopReason, usage: this.usage, model: this.model };
  }

  /** The turn as received, when it both thought and called tools (the only case that must be replayed). */
  replayBlocks(): { toolUseId: string; blocks: WireBlock[] } | undefined {
    const ordered = this.ordered();
    const thought = ordered.some((entry) => entry.wire.type === 'thinking' || entry.wire.type === 'redacted_thinking');
    const firstToolUse = ordered.find((entry) => entry.block?.type === 'tool_use')?.block;
    if (!thought || firstToolUse?.type !== 'tool_use') return undefined;
    return { toolUseId: firstToolUse.id, blocks: ordered.map((entry) => entry.wire) };
  }
}

type WireUsage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};

/** message_delta usage is cumulative; fields it leaves null keep their message_start value. */
function mergeUsage(base: Usage, wire: WireUsage): Usage {
  return {
    inputTokens: wire.input_tokens ?? base.inputTokens,
    outputTokens: wire.output_tokens ?? base.outputTokens,
    cacheReadTokens: wire.cache_read_input_tokens ?? base.cacheReadTokens,
    cacheWriteTokens: wire.cache_creation_input_tokens ?? base.cacheWriteTokens,
  };
}

function mapStopReason(reason: Anthropic.StopReason | null): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
      return 'max_tokens';
    default:
      return 'other';
  }
}

function factsOf(error: unknown): FailureFacts {
  if (error instanceof MessagesCallError) return { provider: PROVIDER, ...error.facts, cause: error.cause ?? error };
  // Anything else escaping mid-stream (socket reset, bad JSON) is a transport failure.
  const message = error instanceof Error ? error.message : String(error);
  return { provider: PROVIDER, message, network: true, cause: error };
}
