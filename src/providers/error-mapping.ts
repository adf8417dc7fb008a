/**
 * Turns what an SDK threw into hob's typed errors, the same way for every provider, so one
 * retry policy (retry.ts) can decide by `retryable` alone.
 */
import { ProviderError, PromptTooLongError, type WindowFigures } from '../core/errors.js';

/** What we know about a failed call, read off whichever SDK error class was thrown. */
export type FailureFacts = {
  /** Provider label for messages: "Anthropic", "OpenAI". */
  provider: string;
  /** HTTP status; undefined for network failures and for errors sent inside the stream. */
  status?: number;
  headers?: { get(name: string): string | null };
  /** The API's own message (without status prefix). */
  message: string;
  /** Error type or code from the body: overloaded_error, rate_limit_error, context_length_exceeded… */
  kind?: string;
  /** The request never got a response (DNS, refused, reset, timeout). */
  network?: boolean;
  /** The error object of the body, when the API sent one (llama.cpp puts its counts there). */
  body?: unknown;
  cause: unknown;
};

const promptTooLongPattern =
  /prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|context window|context limit|exceeds? the available context|exceed_context_size|context the overflows|context length of only|too many (input )?tokens|input is too long/i;

/**
 * Error kinds that no retry can fix. An error sent inside the stream has no status, so its
 * kind decides; any other kind there (overloaded_error, api_error, server_error…) is transient.
 */
const permanentKinds = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'invalid_api_key',
  'billing_error',
  'insufficient_quota',
]);

export function toProviderError(facts: FailureFacts, now: () => number = Date.now): ProviderError {
  const { provider, status, message, kind, cause } = facts;
  const detail = kind ? `${kind}: ${message}` : message;

  if (facts.network) {
    return new ProviderError(`${provider} connection failed: ${message}`, { retryable: true, cause });
  }
  if (status === 413 || ((status === 400 || status === undefined) && (kind === 'context_length_exceeded' || kind === 'exceed_context_size_error' || promptTooLongPattern.test(message)))) {
    return new PromptTooLongError(`${provider}: ${detail}`, cause, windowFigures(message, facts.body));
  }
  if (status === 401 || status === 403) {
    return new ProviderError(
      `${provider} rejected the API key (${status} ${detail}). Check model.api_key in the config.`,
      { status, retryable: false, cause },
    );
  }
  const retryAfterMs = facts.headers ? parseRetryAfter(facts.headers, now) : undefined;
  const permanent = kind !== undefined && permanentKinds.has(kind);
  const retryable = !permanent && (status === undefined || status === 408 || status === 409 || status === 429 || status >= 500);
  const prefix = status === undefined ? `${provider} stream failed` : `${provider} ${status}`;
  return new ProviderError(`${prefix}: ${detail}`, { status, retryable, retryAfterMs, cause });
}

const number = (digits: string | undefined): number | undefined => {
  const value = digits === undefined ? Number.NaN : Number(digits.replace(/,/g, ''));
  return Number.isFinite(value) && value > 0 ? value : undefined;
};

/**
 * The prompt's size and the window as the server stated them, so reactive compaction aims
 * below the server's own count. The phrasings of Anthropic ("prompt is too long: 8653 tokens >
 * 8000 maximum", "input length and `max_tokens` exceed context limit: 7000 + 2000 > 8000"),
 * OpenAI and vLLM ("maximum context length is 8192 tokens. However, your messages resulted in
 * 9000 tokens", "(8000 in the messages, 1000 in the completion)", "your request has 7500 input
 * tokens"), OpenRouter ("(7000 of text input, …)"), LM Studio ("keep the first 9000 tokens …
 * context length of only 8192 tokens") and llama.cpp's body fields (`n_prompt_tokens`, `n_ctx`).
 */
export function windowFigures(message: string, body?: unknown): WindowFigures {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const field = (name: string) => (typeof fields[name] === 'number' ? number(String(fields[name])) : undefined);
  const anthropic = /prompt is too long:\s*([\d,]+) tokens\s*>\s*([\d,]+)/i.exec(message);
  if (anthropic) return { promptTokens: number(anthropic[1]), contextWindow: number(anthropic[2]) };
  const sum = /exceed context limit:\s*([\d,]+)\s*\+\s*[\d,]+\s*>\s*([\d,]+)/i.exec(message);
  if (sum) return { promptTokens: number(sum[1]), contextWindow: number(sum[2]) };
  const window = number(/(?:maximum context length is|context length of only) ([\d,]+)/i.exec(message)?.[1]) ?? field('n_ctx');
  const prompt =
    number(/([\d,]+) (?:in the messages|of text input)/i.exec(message)?.[1]) ??
    number(/keep the first ([\d,]+) tokens/i.exec(message)?.[1]) ??
    number(/(?:messages resulted in|request has) ([\d,]+)(?: input)? tokens/i.exec(message)?.[1]) ??
    field('n_prompt_tokens');
  return { ...(prompt ? { promptTokens: prompt } : {}), ...(window ? { contextWindow: window } : {}) };
}

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date).
 * Returns undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(headers: { get(name: string): string | null }, now: () => number = Date.now): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms)) return Math.max(0, Math.round(ms));
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value.trim());
  if (value.trim() !== '' && Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

/**
 * The error a stream ends with when its AbortSignal fired. Not retryable; its message is
 * exactly "aborted" so `isAbortError` from core/errors recognises it.
 */
export function abortedError(signal: AbortSignal): ProviderError {
  return new ProviderError('aborted', { retryable: false, cause: signal.reason });
}

/** A stream that closed cleanly but before the API said it was finished. */
export function truncatedStreamError(provider: string): ProviderError {
  return new ProviderError(`${provider} stream ended before the message was complete`, { retryable: true });
}

/**
 * Tool input the model produced that is not valid JSON. We still emit the tool_use (every
 * tool_use needs a tool_result), with this input, so the tool registry's validation turns it
 * into an is_error result the model can read and correct.
 */
export type InvalidToolInput = { __invalid_json: string };

export function parseToolInput(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    const invalid: InvalidToolInput = { __invalid_json: raw };
    return invalid;
  }
}
