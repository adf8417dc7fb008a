/**
 * The one retry policy for model calls: a ProviderClient wrapper, so clients stay simple and
 * tests inject `sleep` and `random` instead of waiting.
 */
import { ProviderError } from '../core/errors.js';
import { abortedError } from './error-mapping.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from './types.js';

export type RetryOptions = {
  /** Attempts in total, the first included. */
  maxAttempts?: number;
  /** Backoff ceiling of the first retry; doubles each attempt (full jitter below it). */
  baseDelayMs?: number;
  /**
   * Longest single wait. A server that asks (retry-after) for longer than this is not
   * retried here: the error passes through with its retryAfterMs so a fallback model can
   * take over at once and the person can be told when to try again.
   */
  maxDelayMs?: number;
  /** Waits `ms`; must resolve early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1). */
  random?: () => number;
};

/**
 * Retries retryable failures with exponential backoff and full jitter, honouring the
 * server's retry-after. Emits `retry` ({ attempt: the attempt about to start, 2-based }) before
 * each wait. Never retries once text or a tool_use has reached the consumer (the error then
 * passes through with streamed=true), and stops at once when the signal aborts.
 */
export function withRetries(client: ProviderClient, options: RetryOptions = {}): ProviderClient {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const sleep = options.sleep ?? abortableSleep;
  const random = options.random ?? Math.random;

  return {
    provider: client.provider,
    model: client.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      for (let attempt = 1; ; attempt += 1) {
        let streamed = false;
        let failure: (ProviderEvent & { type: 'error' }) | undefined;
        for await (const event of guarded(client, request, signal)) {
          if (event.type === 'error') {
            failure = event;
            break;
          }
          if (event.type === 'text_delta' || event.type === 'tool_use') streamed = true;
          yield event;
          if (event.type === 'done') return;
        }
        if (!failure) {
          // The contract promises a final done or error; a stream that just stops is a failure.
          failure = { type: 'error', error: new ProviderError(`${client.provider} stream ended without a result`, { retryable: true }), streamed };
        }
        const { error } = failure;
        const alreadyStreamed = streamed || failure.streamed;
        const delayMs = backoff(attempt, error.retryAfterMs);
        if (signal.aborted || !error.retryable || alreadyStreamed || attempt >= maxAttempts || delayMs === undefined) {
          yield { type: 'error', error: signal.aborted ? abortedError(signal) : error, streamed: alreadyStreamed };
          return;
        }
        yield { type: 'retry', attempt: attempt + 1, delayMs, error };
        await sleep(delayMs, signal);
        if (signal.aborted) {
          yield { type: 'error', error: abortedError(signal), streamed: false };
          return;
        }
      }
    },
  };

  /** The wait before the next attempt, or undefined when the server asks for too long. */
  function backoff(attempt: number, retryAfterMs: number | undefined): number | undefined {
    if (retryAfterMs !== undefined) return retryAfterMs <= maxDelayMs ? retryAfterMs : undefined;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    return Math.floor(random() * ceiling);
  }
}

/** Runs a client's stream, turning a thrown exception (a contract breach) into an error event. */
async function* guarded(client: ProviderClient, request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  let streamed = false;
  try {
    for await (const event of client.stream(request, signal)) {
      if (event.type === 'text_delta' || event.type === 'tool_use') streamed = true;
      yield event;
    }
  } catch (cause) {
    const error = new ProviderError(`${client.provider} client threw: ${String(cause)}`, { retryable: false, cause });
    yield { type: 'error', error, streamed };
  }
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
