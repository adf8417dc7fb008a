/**
 * The one call of the Messages API hob makes, a streamed `POST /v1/messages`, made as the
 * Anthropic SDK makes it (its headers, its events, its errors read off the same bodies) over
 * core/lean-fetch.ts, the stream's server-sent events read by eventsource-parser. The SDK's
 * client is 225 modules (~600 KB of code, every resource of the API) for this one call: loaded
 * on the way to the first answer after a start (~20 ms there), and its request and stream
 * machinery ran per request besides. It stays the way when someone asks for its OpenTelemetry
 * spans (anthropic-sdk.ts).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type Anthropic from '@anthropic-ai/sdk';
import type { FailureFacts } from './error-mapping.js';

export type RawEvent = Anthropic.RawMessageStreamEvent;

/** A streamed Messages call: the raw events of one answer. */
export type MessagesCall = (params: Anthropic.MessageCreateParamsStreaming, body: Buffer, signal: AbortSignal) => AsyncIterable<RawEvent>;

/** What a failed call tells error-mapping.ts (all but the provider's name); `cause` is what failed. */
export class MessagesCallError extends Error {
  constructor(
    readonly facts: Omit<FailureFacts, 'provider' | 'cause'>,
    options?: { cause?: unknown },
  ) {
    super(facts.message, options);
  }
}

/** The API version hob's requests and events are written against (the SDK 1.x's). */
const API_VERSION = '2023-06-01';
/** As long as the SDK waits by default for an answer to begin. */
const ANSWER_TIMEOUT_MS = 600_000;

export function httpMessagesCall(options: { apiKey: string; baseUrl: string; fetch: typeof globalThis.fetch }): MessagesCall {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  const headers = { 'x-api-key': options.apiKey, 'anthropic-version': API_VERSION, accept: 'application/json', 'content-type': 'application/json' };
  return async function* messages(_params, body, signal) {
    if (signal.aborted) throw signal.reason;
    // The caller's abort, or the SDK's wait for an answer to begin running out.
    const call = new AbortController();
    const forward = () => call.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    const timer = setTimeout(() => call.abort(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)), ANSWER_TIMEOUT_MS);
    try {
      let response: Response;
      try {
        response = await options.fetch(url, { method: 'POST', headers, body, signal: call.signal });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw new MessagesCallError({ message: messageOf(error), network: true }, { cause: error });
      } finally {
        clearTimeout(timer);
      }
      if (!response.ok) throw await httpError(response);
      // Read once: core/lean-fetch.ts's leanStreamFetch hands the socket's stream over to one reader.
      const stream = response.body as AsyncIterable<Uint8Array> | null;
      if (!stream) throw new MessagesCallError({ message: 'the answer had no body', network: true });
      yield* events(stream, () => response.headers);
    } finally {
      signal.removeEventListener('abort', forward);
    }
  };
}

/** An answer that is not 2xx: the API's error body, as the SDK reads it. */
async function httpError(response: Response): Promise<MessagesCallError> {
  const text = await response.text().catch(() => '');
  const body = safeJson(text);
  const error = errorOf(body);
  const message = error?.message ?? (body !== undefined ? JSON.stringify(body) : text || `${response.status} status code (no body)`);
  return new MessagesCallError({ status: response.status, headers: response.headers, message, ...(error?.type ? { kind: error.type } : {}), body: error });
}

/**
 * The stream's events in order; an `error` event ends it as a call error, `ping`s are skipped.
 * The answer's headers are asked for only then (built when asked: they load Node's own fetch).
 */
async function* events(body: AsyncIterable<Uint8Array>, headers: () => Headers): AsyncGenerator<RawEvent> {
  const ready: RawEvent[] = [];
  let failure: MessagesCallError | undefined;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (failure || message.event === undefined || message.event === 'ping' || !message.data) return;
      if (message.event === 'error') {
        const error = errorOf(safeJson(message.data));
        failure = new MessagesCallError({ headers: headers(), message: error?.message ?? message.data, ...(error?.type ? { kind: error.type } : {}), body: error });
        return;
      }
      ready.push(JSON.parse(message.data) as RawEvent);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const event of ready.splice(0)) yield event;
    if (failure) throw failure;
  }
}

function errorOf(body: unknown): { type?: string; message?: string } | undefined {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  return { ...(typeof type === 'string' ? { type } : {}), ...(message !== undefined ? { message: typeof message === 'string' ? message : JSON.stringify(message) } : {}) };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return error instanceof Error ? `${error.message}${cause}` : String(error);
}
