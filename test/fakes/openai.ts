/**
 * A scripted fake of the OpenAI Chat Completions API (POST /v1/chat/completions, streaming
 * `data:` chunks ending in `data: [DONE]`), bound to 127.0.0.1:0, that the real `openai` SDK
 * (and any OpenAI-compatible client) talks to.
 *
 * ```ts
 * const fake = await startFakeOpenAI();
 * fake.push({ text: 'Hi' }, { toolCalls: [{ name: 'read', input: { path: 'a' } }] });
 * const sdk = new OpenAI({ apiKey: 'k', baseURL: fake.baseUrl, maxRetries: 0 });
 * // ... fake.requests[0].body.messages, .tools, .stream_options
 * await fake.close();
 * ```
 *
 * Each request takes the next queued response (or, with `respondWith`, one made for it); an
 * empty queue answers 400 "no scripted response". The usage chunk is sent only when the
 * request asks for `stream_options.include_usage`; its prompt tokens are the characters of the
 * messages and tools over four unless scripted. With `{ apiKey }` any other bearer token gets
 * 401. As strict as the real servers: `server` picks whose rules apply (default OpenAI's) —
 * a prompt over `contextWindow` is refused in that server's words (vLLM, llama.cpp and
 * OpenRouter count max_tokens in; Ollama silently cuts the prompt instead, as its OpenAI
 * endpoint does, and says so in `truncated`), and the server's window endpoints answer.
 */
import type http from 'node:http';
import { discoveryRoutes, overflow, promptTokens, type ModelServer, type ServedModel } from './model-servers.js';
import {
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

export type FakeOpenAIUsage = { prompt?: number; completion?: number; cached?: number };

type Common = {
  /** Wait this long before answering (the request is recorded at once). */
  delayMs?: number;
  usage?: FakeOpenAIUsage;
};

/** One scripted answer. */
export type OpenAIScript = Common &
  (
    | { text: string; chunks?: number; finishReason?: 'stop' | 'length' | 'content_filter' }
    | {
        toolCalls: Array<{ id?: string; name: string; input?: unknown; /** Sent verbatim instead of JSON(input). */ rawArguments?: string }>;
        text?: string;
      }
    | {
        status: number;
        message?: string;
        type?: string;
        code?: string;
        retryAfterSeconds?: number;
        /** Raw `retry-after` value, e.g. an HTTP date. */
        retryAfter?: string;
        retryAfterMs?: number;
      }
    /**
     * Streams `text` (default "partial") then fails: `mode: 'chunk'` (default) sends a
     * `data: {"error": …}` chunk as OpenAI does; `mode: 'socket'` destroys the connection.
     */
    | { errorMidStream: true; text?: string; mode?: 'chunk' | 'socket' }
    /** 400 with code "context_length_exceeded". */
    | { promptTooLong: true }
    /** Starts the stream (optionally with some text) and never finishes it. */
    | { hang: true; text?: string }
  );

type ChatMessage = {
  role: string;
  content?: string | null | Array<Record<string, unknown> & { type: string }>;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
};

/** The request body fields tests look at (the fake keeps the whole parsed JSON). */
export type OpenAIRequestBody = {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  messages: ChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }>;
};

export type FakeOpenAI = ScriptedServer<OpenAIScript, OpenAIRequestBody> & {
  /** What to pass as the SDK's `baseURL`: origin + "/v1". */
  baseUrl: string;
  /** Chat requests Ollama would have cut to its window (their indexes in `requests`). */
  truncated: number[];
  /** Chat requests refused as over the window. */
  refused: number[];
  /** The server restarted with another window (its endpoints report it from now on). */
  setContextWindow(tokens: number): void;
};

export type FakeOpenAIOptions = {
  apiKey?: string;
  /** Whose rules and endpoints (default: OpenAI's). */
  server?: ModelServer;
  /** The window the server runs (default 128,000). */
  contextWindow?: number;
  /** The model its window endpoints report (default "local-model", loaded). */
  model?: ServedModel;
};

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  let completionCount = 0;
  const kind = options.server ?? 'openai';
  let window = options.contextWindow ?? 128_000;
  const truncated: number[] = [];
  const refused: number[] = [];
  const server = await startScriptedServer<OpenAIScript, OpenAIRequestBody>(
    '/v1/chat/completions',
    async (script, request, res) => {
      if (options.apiKey !== undefined && request.apiKey !== options.apiKey) {
        return sendError(res, 401, { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' });
      }
      const prompt = promptTokens(request.body);
      const over = overflow(kind, prompt, request.body.max_tokens ?? request.body.max_completion_tokens ?? 0, window);
      if (over?.kind === 'refuse') {
        refused.push(server.requests.indexOf(request));
        return sendJson(res, over.status, over.body);
      }
      if (over?.kind === 'truncate') truncated.push(server.requests.indexOf(request));
      if (!script) {
        return sendError(res, 400, { message: 'fake-openai: no scripted response queued', type: 'invalid_request_error' });
      }
      if (script.delayMs) await sleep(script.delayMs);
      completionCount += 1;
      await answer(script, request.body, `chatcmpl-fake-${completionCount}`, res, Math.min(prompt, window));
    },
    discoveryRoutes<OpenAIRequestBody>(kind, () => window, options.model ?? { id: 'local-model' }),
  );
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    truncated,
    refused,
    setContextWindow: (tokens) => {
      window = tokens;
    },
  };
}

async function answer(script: OpenAIScript, body: OpenAIRequestBody, id: string, res: http.ServerResponse, counted: number): Promise<void> {
  if ('status' in script) {
    const type = script.type ?? (script.status === 429 ? 'rate_limit_exceeded' : script.status >= 500 ? 'server_error' : 'invalid_request_error');
    const error = { message: script.message ?? `fake ${type}`, type, code: script.code ?? null, param: null };
    return sendError(res, script.status, error, retryHeaders(script));
  }
  if ('promptTooLong' in script) {
    return sendError(res, 400, {
      message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    });
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): void =>
    data(res, { id, object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] });

  startSse(res);
  chunk({ role: 'assistant', content: '' });
  let completionTokens = 0;

  if ('errorMidStream' in script) {
    chunk({ content: script.text ?? 'partial' });
    if (script.mode === 'socket') {
      // Let the text reach the client first, then cut the connection without ending the body.
      await new Promise<void>((resolve) => res.write('', () => resolve()));
      await sleep(10);
      res.destroy();
      return;
    }
    data(res, { error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } });
    res.end();
    return;
  }
  if ('hang' in script) {
    if (script.text) chunk({ content: script.text });
    return hangUntilClosed(res);
  }

  let finishReason: string;
  if ('toolCalls' in script) {
    if (script.text) chunk({ content: script.text });
    for (const [index, call] of script.toolCalls.entries()) {
      const args = call.rawArguments ?? JSON.stringify(call.input ?? {});
      const callId = call.id ?? `call_fake_${index + 1}`;
      chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] });
      for (const piece of splitText(args, 2)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
      completionTokens += Math.ceil(args.length / 4);
    }
    finishReason = 'tool_calls';
  } else {
    for (const piece of splitText(script.text, script.chunks ?? 3)) chunk({ content: piece });
    completionTokens += Math.ceil(script.text.length / 4);
    finishReason = script.finishReason ?? 'stop';
  }
  chunk({}, finishReason);
  if (body.stream_options?.include_usage) {
    const prompt = script.usage?.prompt ?? counted;
    const completion = script.usage?.completion ?? completionTokens;
    data(res, {
      id,
      object: 'chat.completion.chunk',
      created: 1,
      model: body.model,
      choices: [],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: { cached_tokens: script.usage?.cached ?? 0 },
      },
    });
  }
  write(res, 'data: [DONE]\n\n');
  res.end();
}

function data(res: http.ServerResponse, payload: unknown): void {
  write(res, `data: ${JSON.stringify(payload)}\n\n`);
}

function sendError(res: http.ServerResponse, status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error }, { 'x-request-id': 'req_fake', ...headers });
}

export type { RecordedRequest };
