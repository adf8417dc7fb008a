/**
 * A scripted fake of the Anthropic Messages API (POST /v1/messages, streaming SSE), bound to
 * 127.0.0.1:0, that the real @anthropic-ai/sdk talks to.
 *
 * ```ts
 * const fake = await startFakeAnthropic();
 * fake.push({ text: 'Hello there', chunks: 2 }, { toolCalls: [{ name: 'read', input: { path: 'a' } }] });
 * const sdk = new Anthropic({ apiKey: 'k', baseURL: fake.baseUrl, maxRetries: 0 });
 * // ... fake.requests[0].body.system, .tools, .messages; fake.requests[0].apiKey
 * await fake.close();
 * ```
 *
 * Each request takes the next queued response; an empty queue answers 400
 * "no scripted response" so a test that under-scripts fails loudly instead of retrying.
 * Accepts `x-api-key` and `Authorization: Bearer`; with `{ apiKey }` any other key gets 401.
 * A request without `anthropic-version` gets the API's 400 ("anthropic-version: header is required").
 * As strict as the API: a prompt over `contextWindow` (default 200,000) is refused ("prompt is
 * too long: N tokens > W maximum"), and so is one whose prompt plus max_tokens exceeds it
 * ("input length and `max_tokens` exceed context limit"); usage counts the prompt as its
 * characters over four unless scripted. `respondWith` makes answers from the request.
 * With `{ whenEmpty }` an empty queue answers with that script instead (an instant stand-in
 * model for benchmarks), and `{ keepRequests }` bounds what `requests` holds.
 */
import type http from 'node:http';
import { promptTokens } from './model-servers.js';
import {
  type ScriptedServerOptions,
  hangUntilClosed,
  retryHeaders,
  sendJson,
  sleep,
  splitText,
  startScriptedServer,
  startSse,
  write,
  type RecordedRequest,
  type ScriptedServer,
} from './scripted-http.js';

export type FakeUsage = { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };

type Common = {
  /** Wait this long before answering (the request is recorded at once). */
  delayMs?: number;
  /** Answer once this settles (the request is recorded at once): a run kept in flight until the test has seen what it needs, however slow the machine. */
  until?: Promise<unknown>;
  usage?: FakeUsage;
  /** Streams a thinking block (signature "sig_<message id>") before the content, as thinking models do. */
  thinking?: string;
};

/** One scripted answer. */
export type AnthropicScript = Common &
  (
    | { text: string; chunks?: number; /** Pause between chunks: the answer is written slowly. */ chunkDelayMs?: number; stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' }
    | {
        toolCalls: Array<{ id?: string; name: string; input?: unknown; /** Sent verbatim instead of JSON(input). */ rawJson?: string }>;
        text?: string;
      }
    | {
        status: number;
        errorType?: string;
        message?: string;
        retryAfterSeconds?: number;
        /** Raw `retry-after` value, e.g. an HTTP date. */
        retryAfter?: string;
        retryAfterMs?: number;
      }
    /** Streams `text` (default "partial"), then an SSE `event: error` overloaded_error. */
    | { errorMidStream: true; text?: string }
    /** 400 invalid_request_error "prompt is too long: 210000 tokens > 200000 maximum". */
    | { promptTooLong: true }
    /**
     * Starts the stream (optionally with some text, in `chunks` pieces `chunkDelayMs` apart)
     * and never finishes it: a model still writing when hob is killed.
     */
    | {
        hang: true;
        text?: string;
        chunks?: number;
        chunkDelayMs?: number;
        /** Each chunk after the first is written once this settles (after `chunkDelayMs`): the model writes on when the test's state exists, however slow the machine. */
        nextChunk?: () => Promise<unknown>;
      }
  );

/** The request body fields tests look at (the fake keeps the whole parsed JSON). */
export type AnthropicRequestBody = {
  model: string;
  max_tokens: number;
  stream?: boolean;
  system?: string | Array<{ type: 'text'; text: string; cache_control?: { type: string } }>;
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown>; cache_control?: { type: string } }>;
  messages: Array<{ role: string; content: string | Array<Record<string, unknown> & { type: string }> }>;
};

export type FakeAnthropic = ScriptedServer<AnthropicScript, AnthropicRequestBody> & {
  /** What to pass as the SDK's `baseURL` (the origin; the SDK appends /v1/messages). */
  baseUrl: string;
  /** Requests refused as over the window (their indexes in `requests`). */
  refused: number[];
};

const errorTypeByStatus: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export async function startFakeAnthropic(options: { apiKey?: string; contextWindow?: number } & ScriptedServerOptions<AnthropicScript> = {}): Promise<FakeAnthropic> {
  let messageCount = 0;
  const window = options.contextWindow ?? 200_000;
  const refused: number[] = [];
  const server = await startScriptedServer<AnthropicScript, AnthropicRequestBody>('/v1/messages', async (script, request, res) => {
    if (options.apiKey !== undefined && request.apiKey !== options.apiKey) {
      return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    }
    // As the API answers a request that does not name the version it is written against.
    if (!request.headers['anthropic-version']) return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
    const prompt = promptTokens(request.body);
    const maxTokens = request.body.max_tokens ?? 0;
    if (prompt > window || prompt + maxTokens > window) {
      refused.push(server.requests.indexOf(request));
      const message =
        prompt > window
          ? `prompt is too long: ${prompt} tokens > ${window} maximum`
          : `input length and \`max_tokens\` exceed context limit: ${prompt} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`;
      return sendError(res, 400, 'invalid_request_error', message);
    }
    if (!script) return sendError(res, 400, 'invalid_request_error', 'fake-anthropic: no scripted response queued');
    if (script.delayMs) await sleep(script.delayMs);
    if (script.until) await script.until;
    messageCount += 1;
    await answer(script, request.body, `msg_fake_${messageCount}`, res, prompt);
  }, {}, options);
  return { ...server, baseUrl: server.origin, refused };
}

async function answer(script: AnthropicScript, body: AnthropicRequestBody, id: string, res: http.ServerResponse, counted: number): Promise<void> {
  if ('status' in script) {
    const type = script.errorType ?? errorTypeByStatus[script.status] ?? 'api_error';
    return sendError(res, script.status, type, script.message ?? `fake ${type}`, retryHeaders(script));
  }
  if ('promptTooLong' in script) {
    return sendError(res, 400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum');
  }
  const usage = { input: counted, output: 0, cacheRead: 0, cacheWrite: 0, ...script.usage };
  startSse(res);
  event(res, {
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: 1,
        cache_read_input_tokens: usage.cacheRead,
        cache_creation_input_tokens: usage.cacheWrite,
      },
    },
  });
  event(res, { type: 'ping' });

  let index = 0;
  let outputTokens = 0;
  if (script.thinking !== undefined) {
    event(res, { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    event(res, { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: script.thinking } });
    event(res, { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: `sig_${id}` } });
    event(res, { type: 'content_block_stop', index });
    index += 1;
  }
  const textBlock = async (text: string, chunks: number, delayMs = 0): Promise<void> => {
    event(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const [n, piece] of splitText(text, chunks).entries()) {
      if (n > 0 && delayMs) await sleep(delayMs);
      event(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    }
    event(res, { type: 'content_block_stop', index });
    outputTokens += Math.ceil(text.length / 4);
    index += 1;
  };

  if ('errorMidStream' in script) {
    event(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    event(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: script.text ?? 'partial' } });
    write(res, `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`);
    res.end();
    return;
  }
  if ('hang' in script) {
    if (script.text) {
      event(res, { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const [n, piece] of splitText(script.text, script.chunks ?? 1).entries()) {
        if (n > 0 && script.chunkDelayMs) await sleep(script.chunkDelayMs);
        if (n > 0) await script.nextChunk?.();
        event(res, { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      }
    }
    return hangUntilClosed(res);
  }

  let stopReason: string;
  if ('toolCalls' in script) {
    if (script.text) await textBlock(script.text, 1);
    for (const [n, call] of script.toolCalls.entries()) {
      const json = call.rawJson ?? JSON.stringify(call.input ?? {});
      const toolId = call.id ?? `toolu_fake_${n + 1}`;
      event(res, { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} } });
      for (const piece of splitText(json, 2)) {
        event(res, { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
      event(res, { type: 'content_block_stop', index });
      outputTokens += Math.ceil(json.length / 4);
      index += 1;
    }
    stopReason = 'tool_use';
  } else {
    await textBlock(script.text, script.chunks ?? 3, script.chunkDelayMs);
    stopReason = script.stopReason ?? 'end_turn';
  }
  event(res, {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: script.usage?.output ?? outputTokens },
  });
  event(res, { type: 'message_stop' });
  res.end();
}

function event(res: http.ServerResponse, data: { type: string } & Record<string, unknown>): void {
  write(res, `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

function sendError(
  res: http.ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { type: 'error', error: { type, message } }, { 'request-id': 'req_fake', ...headers });
}

export type { RecordedRequest };
