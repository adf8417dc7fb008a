/**
 * The Messages call through the Anthropic SDK, for a person who runs an OpenTelemetry SDK beside
 * hob and asks for the SDK's spans (ANTHROPIC_OPEN_TELEMETRY, read by the SDK): loaded only
 * then. Otherwise hob makes the call itself (anthropic-http.ts).
 */
import Anthropic from '@anthropic-ai/sdk';
import { MessagesCallError, type MessagesCall } from './anthropic-http.js';
import { JSON_TYPE } from './request-body.js';

export function sdkMessagesCall(options: { apiKey: string; baseUrl: string; fetch: typeof globalThis.fetch }): MessagesCall {
  // Retries are ours (retry.ts), so the SDK must never retry on its own.
  const sdk = new Anthropic({ apiKey: options.apiKey, baseURL: options.baseUrl, maxRetries: 0, fetch: options.fetch });
  return async function* messages(params, body, signal) {
    try {
      yield* await sdk.messages.create(params, { signal, body, headers: JSON_TYPE });
    } catch (error) {
      throw signal.aborted ? error : callError(error);
    }
  };
}

function callError(error: unknown): unknown {
  if (error instanceof Anthropic.APIConnectionError) return new MessagesCallError({ message: error.message, network: true }, { cause: error });
  if (error instanceof Anthropic.APIError) {
    return new MessagesCallError(
      { status: error.status, headers: error.headers, message: error.apiMessage ?? error.message, ...(error.type ? { kind: error.type } : {}) },
      { cause: error },
    );
  }
  return error;
}
