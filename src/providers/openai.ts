/**
 * OpenAI Chat Completions provider (openai 6.x), streaming; works with any
 * OpenAI-compatible server (vLLM, Ollama, llama.cpp, OpenRouter…) through `baseUrl`.
 * Imported lazily by index.ts so start-up does not load the SDK.
 */
import OpenAI from 'openai';
import type { Block, Message, Usage } from '../core/messages.js';
import { emptyUsage } from '../core/messages.js';
import { leanFetch } from '../core/lean-fetch.js';
import { RequestBody } from './request-body.js';
import { abortedError, parseToolInput, toProviderError } from './error-mapping.js';
import type { ProviderClient, ProviderEvent, ProviderRequest, StopReason, ToolSpec } from './types.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

export type OpenAIProviderOptions = {
  apiKey: string;
  /** Base URL including the version path, e.g. https://api.openai.com/v1 or http://localhost:11434/v1. */
  baseUrl?: string;
  model: string;
  /** How requests are made: core/lean-fetch.ts's, or a fetch a test passes (given text bodies as bytes). */
  fetch?: typeof globalThis.fetch;
  /**
   * Which field carries the output limit. Default: `max_completion_tokens` on api.openai.com
   * (its newer models reject `max_tokens`), `max_tokens` elsewhere (what compatible servers know).
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
};

const PROVIDER = 'OpenAI';
const OFFICIAL_BASE_URL = 'https://api.openai.com/v1';

export function createOpenAIProvider(options: OpenAIProviderOptions): ProviderClient {
  const baseURL = options.baseUrl ?? OFFICIAL_BASE_URL;
  const maxTokensField = options.maxTokensField ?? (hostOf(baseURL) === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens');
  // Retries are ours (retry.ts), so the SDK must never retry on its own.
  const sdk = new CompatibleOpenAI({ apiKey: options.apiKey, baseURL, maxRetries: 0, fetch: leanFetch(options.fetch) });
  const body = new RequestBody();

  return {
    provider: 'openai',
    model: options.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      const model = request.model ?? options.model;
      const turn = new TurnAccumulator(model);
      // openai 6 leaves one abort listener on the signal it is given per request; a per-call
      // signal keeps a long tool loop from piling them up on the run's signal.
      const call = new AbortController();
      const forward = (): void => call.abort(signal.reason);
      signal.addEventListener('abort', forward, { once: true });
      try {
        if (signal.aborted) throw signal.reason;
        const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = {
          model,
          messages: toChatMessages(request),
          stream: true,
          stream_options: { include_usage: true },
          [maxTokensField]: request.maxTokens,
        };
        if (request.tools.length > 0) params.tools = request.tools.map(toTool);
        const chunks = await sdk.chat.completions.create(params, { signal: call.signal, ...body.options(params, request.tools) });
        for await (const chunk of chunks) {
          for (const out of turn.apply(chunk)) yield out;
        }
        // The SDK ends an aborted stream quietly instead of throwing.
        if (signal.aborted) throw signal.reason;
        for (const out of turn.finish()) yield out;
        yield turn.done();
      } catch (error) {
        const mapped = signal.aborted ? abortedError(signal) : toProviderError(factsOf(error));
        yield { type: 'error', error: mapped, streamed: turn.streamed };
      } finally {
        signal.removeEventListener('abort', forward);
      }
    },
  };
}

/**
 * The SDK reads an error from the body's `error` field; some compatible servers (vLLM before
 * its 2025 releases) send it at the top level, `{ "object": "error", "message": … }`, which
 * the SDK would drop, leaving "400 status code (no body)". Such a body is read as the error.
 */
class CompatibleOpenAI extends OpenAI {
  protected override makeStatusError(status: number, error: object, message: string | undefined, headers: Headers): InstanceType<typeof OpenAI.APIError> {
    const flat = typeof error === 'object' && error !== null && !('error' in error) && 'message' in error;
    return super.makeStatusError(status, flat ? { error } : error, message, headers);
  }
}

type PendingCall = { id: string; name: string; args: string };

/** Folds chunks into hob events; tool calls are emitted once the model has finished them. */
class TurnAccumulator {
  streamed = false;
  private text = '';
  private readonly calls = new Map<number, PendingCall>();
  private readonly emitted: Array<{ type: 'tool_use'; id: string; name: string; input: unknown }> = [];
  private finishReason: string | null = null;
  private usage: Usage = emptyUsage();

  constructor(private model: string) {}

  *apply(chunk: Chunk): Generator<ProviderEvent> {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) {
      // OpenAI counts cached tokens inside prompt_tokens; hob's inputTokens means uncached input.
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
      this.usage = {
        inputTokens: chunk.usage.prompt_tokens - cached,
        outputTokens: chunk.usage.completion_tokens,
        cacheReadTokens: cached,
        cacheWriteTokens: 0,
      };
    }
    const choice = chunk.choices[0];
    if (!choice) return;
    const content = choice.delta.content;
    if (content) {
      this.text += content;
      this.streamed = true;
      yield { type: 'text_delta', text: content };
    }
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = this.calls.get(delta.index) ?? { id: '', name: '', args: '' };
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.args += delta.function.arguments;
      this.calls.set(delta.index, call);
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      yield* this.finish();
    }
  }

  /** Emits the accumulated tool calls (once), in index order. */
  *finish(): Generator<ProviderEvent> {
    const indexes = [...this.calls.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const call = this.calls.get(index);
      if (!call) continue;
      this.calls.delete(index);
      // Some compatible servers omit ids; every tool_use needs one to pair with its result.
      const event = { type: 'tool_use' as const, id: call.id || `call_${index}_${this.emitted.length}`, name: call.name, input: parseToolInput(call.args) };
      this.emitted.push(event);
      this.streamed = true;
      yield event;
    }
  }

  done(): ProviderEvent {
    const content: Block[] = [];
    if (this.text) content.push({ type: 'text', text: this.text });
    for (const call of this.emitted) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    const message: Message = { role: 'assistant', content };
    return { type: 'done', message, stopReason: this.stopReason(), usage: this.usage, model: this.model };
  }

  private stopReason(): StopReason {
    switch (this.finishReason) {
      case 'stop':
        return this.emitted.length > 0 ? 'tool_use' : 'end_turn';
      case 'tool_calls':
      case 'function_call':
        return 'tool_use';
      case 'length':
        return 'max_tokens';
      case null:
        // A clean end without finish_reason (lenient compatible servers): judge by content.
        return this.emitted.length > 0 ? 'tool_use' : 'end_turn';
      default:
        return 'other';
    }
  }
}

export function toChatMessages(request: ProviderRequest): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const message of request.messages) {
    if (message.role === 'assistant') out.push(toAssistantMessage(message));
    else out.push(...toUserMessages(message));
  }
  return out;
}

function toAssistantMessage(message: Message): ChatMessage {
  let text = '';
  const toolCalls: OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text || null, tool_calls: toolCalls };
}

/**
 * Tool results become role:"tool" messages, placed first because they must directly follow
 * the assistant message that called them; the rest of the user turn follows as one message.
 * Chat Completions has no is_error flag, so failed results are prefixed with "Error: ".
 */
function toUserMessages(message: Message): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'tool_result':
        out.push({ role: 'tool', tool_call_id: block.toolUseId, content: block.isError ? `Error: ${block.content}` : block.content });
        break;
      case 'text':
        if (block.text) parts.push({ type: 'text', text: block.text });
        break;
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } });
        break;
      case 'tool_use':
        break; // never in a user turn
      case 'thinking':
      case 'redacted_thinking':
        break; // Anthropic's; never in a user turn
      default: {
        const unknownBlock: never = block;
        void unknownBlock;
      }
    }
  }
  if (parts.length === 0) return out;
  // Plain strings when possible: some compatible servers accept only string content.
  const onlyText = parts.every((part) => part.type === 'text');
  out.push({ role: 'user', content: onlyText ? parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n') : parts });
  return out;
}

function toTool(spec: ToolSpec): OpenAI.Chat.Completions.ChatCompletionFunctionTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.inputSchema } };
}

function factsOf(error: unknown): Parameters<typeof toProviderError>[0] {
  if (error instanceof OpenAI.APIConnectionError) {
    return { provider: PROVIDER, message: error.message, network: true, cause: error };
  }
  if (error instanceof OpenAI.APIError) {
    const body: unknown = error.error;
    const apiMessage = typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string' ? body.message : undefined;
    const kind = typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : undefined;
    return { provider: PROVIDER, status: error.status, headers: error.headers, message: apiMessage ?? error.message, kind, body, cause: error };
  }
  // A socket reset mid-stream surfaces as a plain TypeError from fetch's body reader.
  const message = error instanceof Error ? error.message : String(error);
  return { provider: PROVIDER, message, network: true, cause: error };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined; // the SDK reports a bad URL on the first request
  }
}
