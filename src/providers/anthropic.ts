/**
 * Anthropic Messages API provider (@anthropic-ai/sdk 1.x), streaming. Imported lazily by
 * index.ts: the SDK takes ~250 ms to load, which start-up should not pay.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { Block, Message, Usage } from '../core/messages.js';
import { emptyUsage } from '../core/messages.js';
import { asObject, ThinkingMemory, toParams, type WireBlock } from './anthropic-wire.js';
import { leanFetch } from '../core/lean-fetch.js';
import { RequestBody } from './request-body.js';
import { abortedError, parseToolInput, toProviderError, truncatedStreamError } from './error-mapping.js';
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
  // Retries are ours (retry.ts), so the SDK must never retry on its own.
  const sdk = new Anthropic({
    apiKey: options.apiKey,
    // Explicit, so neither ANTHROPIC_BASE_URL nor an SDK profile silently redirects hob.
    baseURL: options.baseUrl ?? 'https://api.anthropic.com',
    maxRetries: 0,
    fetch: leanFetch(options.fetch),
    // The SDK's OpenTelemetry spans, for a person who runs an OpenTelemetry SDK beside hob and
    // asks for them (ANTHROPIC_OPEN_TELEMETRY, read by the SDK); otherwise none are built: each
    // request's span settings and attributes cost ~20 µs with nobody to receive them.
    ...(process.env.ANTHROPIC_OPEN_TELEMETRY === undefined ? { openTelemetry: false as const } : {}),
  });
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
        const events = await sdk.messages.create(params, { signal, ...body.options(params, request.tools) });
        for await (const event of events) {
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

  *apply(event: Anthropic.RawMessageStreamEvent): Generator<ProviderEvent> {
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

function factsOf(error: unknown): Parameters<typeof toProviderError>[0] {
  if (error instanceof Anthropic.APIConnectionError) {
    return { provider: PROVIDER, message: error.message, network: true, cause: error };
  }
  if (error instanceof Anthropic.APIError) {
    return {
      provider: PROVIDER,
      status: error.status,
      headers: error.headers,
      message: error.apiMessage ?? error.message,
      kind: error.type ?? undefined,
      cause: error,
    };
  }
  // Anything else escaping the SDK mid-stream (socket reset, bad JSON) is a transport failure.
  const message = error instanceof Error ? error.message : String(error);
  return { provider: PROVIDER, message, network: true, cause: error };
}
