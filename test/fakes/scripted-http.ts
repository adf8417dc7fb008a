/**
 * The plumbing shared by the scripted LLM fakes (anthropic.ts, openai.ts): a node:http server
 * on 127.0.0.1:0 that records every request and answers each one with the next scripted
 * response. The fakes only decide what bytes a response becomes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake received it. `body` is the parsed JSON body. */
export type RecordedRequest<Body> = {
  method: string;
  path: string;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The key the client authenticated with: `x-api-key`, or the `Authorization: Bearer` token. */
  apiKey: string | undefined;
  body: Body;
};

export type ScriptedServer<Response, Body> = {
  /** Origin of the server, e.g. http://127.0.0.1:41234 (no trailing slash). */
  origin: string;
  /** Every request received so far, oldest first. */
  requests: RecordedRequest<Body>[];
  /** Queues responses; each request takes the next one. */
  push(...responses: Response[]): void;
  /** Answers every request that finds the queue empty (a conversation scripted by what it is asked). */
  respondWith(answer: (request: RecordedRequest<Body>) => Response | undefined): void;
  /** How many queued responses are still unused. */
  pending(): number;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Stops the server and drops open connections (including hanging responses). */
  close(): Promise<void>;
};

/** How a scripted server answers and records beyond its queue. */
export type ScriptedServerOptions<Response> = {
  /**
   * Answers every request that finds the queue empty (an instant stand-in model for
   * benchmarks); without it such a request gets the fake's "no scripted response" error.
   */
  whenEmpty?: Response;
  /** Keeps only the newest this many requests in `requests` (a long benchmark would hold every body). */
  keepRequests?: number;
};

export type Handler<Response, Body> = (
  response: Response | undefined,
  request: RecordedRequest<Body>,
  res: http.ServerResponse,
) => Promise<void>;

/** Other endpoints of the same server (a local model server's discovery endpoints), keyed "GET /api/ps". */
export type ExtraRoutes<Body> = Record<string, (request: RecordedRequest<Body>) => { status: number; body: unknown }>;

export async function startScriptedServer<Response, Body>(
  route: string,
  handle: Handler<Response, Body>,
  extraRoutes: ExtraRoutes<Body> = {},
  options: ScriptedServerOptions<Response> = {},
): Promise<ScriptedServer<Response, Body>> {
  const queue: Response[] = [];
  let fallback: ((request: RecordedRequest<Body>) => Response | undefined) | undefined;
  const requests: RecordedRequest<Body>[] = [];
  let received = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];

  const server = http.createServer((req, res) => {
    void (async () => {
      // Decoded once whole: a character's UTF-8 bytes may be split across chunks.
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest<Body> = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: flattenHeaders(req.headers),
        apiKey: apiKeyOf(req.headers),
        body: (raw ? JSON.parse(raw) : {}) as Body,
      };
      requests.push(recorded);
      received += 1;
      if (options.keepRequests !== undefined && requests.length > options.keepRequests) requests.shift();
      for (const waiter of waiters.filter((w) => received >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const extra = extraRoutes[`${recorded.method} ${recorded.path.split('?')[0]}`];
      if (extra) {
        const answer = extra(recorded);
        sendJson(res, answer.status, answer.body);
        return;
      }
      if (req.method !== 'POST' || recorded.path.split('?')[0] !== route) {
        sendJson(res, 404, { error: { type: 'not_found_error', message: `fake: no route ${recorded.path}` } });
        return;
      }
      await handle(queue.shift() ?? fallback?.(recorded) ?? options.whenEmpty, recorded, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { type: 'api_error', message: String(error) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    push: (...responses) => void queue.push(...responses),
    respondWith: (answer) => {
      fallback = answer;
    },
    pending: () => queue.length,
    waitForRequests: (count) =>
      received >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function startSse(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
}

/** Writes raw SSE text unless the client has gone away (abort tests close sockets early). */
export function write(res: http.ServerResponse, chunk: string): void {
  if (!res.destroyed && !res.writableEnded) res.write(chunk);
}

/** Keeps a response open until the client disconnects or the server closes. */
export function hangUntilClosed(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => res.on('close', () => resolve()));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits `text` into `parts` pieces of near-equal length (at least one character each). */
export function splitText(text: string, parts: number): string[] {
  const count = Math.max(1, Math.min(parts, text.length));
  const size = Math.ceil(text.length / count);
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** Retry headers for scripted rate limits: seconds, a raw header value, or milliseconds. */
export function retryHeaders(options: {
  retryAfterSeconds?: number;
  retryAfter?: string;
  retryAfterMs?: number;
}): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.retryAfterSeconds !== undefined) headers['retry-after'] = String(options.retryAfterSeconds);
  if (options.retryAfter !== undefined) headers['retry-after'] = options.retryAfter;
  if (options.retryAfterMs !== undefined) headers['retry-after-ms'] = String(options.retryAfterMs);
  return headers;
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function apiKeyOf(headers: http.IncomingHttpHeaders): string | undefined {
  const direct = headers['x-api-key'];
  if (typeof direct === 'string') return direct;
  const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? '');
  return bearer?.[1];
}
