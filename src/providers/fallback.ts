/** Fallback models: when the primary is down or overloaded, answer with the next one. */
import { ProviderError } from '../core/errors.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from './types.js';

/**
 * Tries `primary`, then each fallback in order, but only while the failure is retryable
 * (overloaded, rate-limited, 5xx, network) and nothing has been streamed yet. Other errors
 * (bad key, prompt too long, abort) end the stream as they are: another model would hide them.
 * Wrap each client in `withRetries` first, so a model is abandoned only after its retries.
 */
export function withFallback(primary: ProviderClient, fallbacks: ProviderClient[]): ProviderClient {
  if (fallbacks.length === 0) return primary;
  const chain = [primary, ...fallbacks];
  return {
    provider: primary.provider,
    model: primary.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      let streamed = false;
      for (const [position, client] of chain.entries()) {
        const isLast = position === chain.length - 1;
        streamed = false;
        for await (const event of client.stream(request, signal)) {
          if (event.type === 'error') {
            const moveOn = !isLast && event.error.retryable && !event.streamed && !streamed && !signal.aborted;
            if (moveOn) break;
            yield event;
            return;
          }
          if (event.type === 'text_delta' || event.type === 'tool_use') streamed = true;
          yield event;
          if (event.type === 'done') return;
        }
      }
      // Only reached when the last client broke its contract by ending without a result.
      const error = new ProviderError(`${primary.provider} stream ended without a result`, { retryable: true });
      yield { type: 'error', error, streamed };
    },
  };
}

/** The same client answering as another model (via ProviderRequest.model). */
export function withModel(client: ProviderClient, model: string): ProviderClient {
  return {
    provider: client.provider,
    model,
    stream: (request: ProviderRequest, signal: AbortSignal) => client.stream({ ...request, model }, signal),
  };
}
