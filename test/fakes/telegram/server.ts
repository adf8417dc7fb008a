import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { botApiMethods } from './bot-api.js';
import { BotApiError, Params } from './params.js';
import { BodyError, parseRequestBody } from './request-body.js';
import type { AnsweredCallback, ApiResponse, Fault, Json, RecordedCall } from './types.js';
import type { UpdateFeed } from './update-feed.js';
import type { FakeWorld } from './world.js';

export interface ServerState {
  token: string;
  world: FakeWorld;
  feed: UpdateFeed;
  calls: RecordedCall[];
  answeredCallbacks: AnsweredCallback[];
  faults: Map<string, Fault[]>;
  /** Called after every change a test might wait for. */
  changed: () => void;
  /** Told of every call as it arrives (benchmarks time replies with it). */
  called?: (call: RecordedCall) => void;
}

/** The HTTP face of the fake: `/bot<token>/<method>` and `/file/bot<token>/<file_path>`. */
export async function listen(state: ServerState): Promise<{ server: http.Server; apiRoot: string }> {
  const server = http.createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      // A bug in the fake itself: answer 500 so the test fails loudly instead of hanging.
      if (!res.headersSent) send(res, 500, { ok: false, error_code: 500, description: `Internal Server Error: ${String(error)}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, apiRoot: `http://127.0.0.1:${port}` };
}

async function handle(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const url = new URL(req.url ?? '/', 'http://fake');

  const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
  if (download) return serveFile(state, download[1] ?? '', decodeURIComponent(download[2] ?? ''), res);

  const route = /^\/bot([^/]*)\/([^/]*)$/.exec(url.pathname);
  if (!route) return void send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
  const method = route[2] ?? '';

  let body: Json = {};
  let files: RecordedCall['files'] = [];
  let bodyError: BodyError | undefined;
  try {
    ({ fields: body, files } = parseRequestBody(req.headers['content-type'] ?? '', raw, url.searchParams));
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    bodyError = error;
  }
  const call: RecordedCall = { seq: state.calls.length + 1, method, body, files, at: state.world.now() };
  state.calls.push(call);
  state.called?.(call);
  const answer = (response: ApiResponse): void => {
    call.response = response;
    const { status, ...payload } = response;
    send(res, status, payload);
    state.changed();
  };
  const refuse = (error: BotApiError): void =>
    answer({
      status: error.code,
      ok: false,
      error_code: error.code,
      description: error.description,
      ...(error.parameters ? { parameters: error.parameters } : {}),
    });

  if (route[1] !== state.token) return refuse(new BotApiError(401, 'Unauthorized'));
  if (bodyError) return refuse(new BotApiError(400, bodyError.message));

  const fault = state.faults.get(method.toLowerCase())?.shift();
  if (fault && !('pass' in fault)) {
    if ('disconnect' in fault) {
      call.response = { status: 0, ok: false, description: 'connection destroyed by fault injection' };
      req.socket.destroy();
      state.changed();
      return;
    }
    if ('retryAfter' in fault) {
      return refuse(new BotApiError(429, `Too Many Requests: retry after ${fault.retryAfter}`, { retry_after: fault.retryAfter }));
    }
    return refuse(new BotApiError(fault.code, fault.description, fault.parameters));
  }

  const params = new Params(body);
  if (method.toLowerCase() === 'getupdates') {
    const reply = (outcome: Json[] | BotApiError): void =>
      outcome instanceof BotApiError ? refuse(outcome) : answer({ status: 200, ok: true, result: outcome });
    // runner.stop() and bot.stop() abort the held fetch; the poll must not outlive it.
    let gone = false;
    res.on('close', () => {
      gone = !res.writableEnded;
      if (gone) state.feed.abandon(reply);
    });
    try {
      state.feed.poll(params, state.world.webhookUrl !== '', reply, () => gone);
    } catch (error) {
      if (!(error instanceof BotApiError)) throw error;
      refuse(error);
    }
    if (!call.response) state.changed(); // parked: a test may be waiting for exactly this
    return;
  }

  const implementation = botApiMethods[method.toLowerCase()];
  if (!implementation) return refuse(new BotApiError(404, 'Not Found'));
  try {
    const result = implementation({ world: state.world, feed: state.feed, params, files, answeredCallbacks: state.answeredCallbacks });
    answer({ status: 200, ok: true, result });
  } catch (error) {
    if (!(error instanceof BotApiError)) throw error;
    refuse(error);
  }
}

function serveFile(state: ServerState, token: string, filePath: string, res: http.ServerResponse): void {
  const file = token === state.token ? [...state.world.files.values()].find((candidate) => candidate.filePath === filePath) : undefined;
  if (!file) return void send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
  res.writeHead(200, { 'content-type': file.mimeType ?? 'application/octet-stream', 'content-length': file.bytes.length });
  res.end(file.bytes);
}

function send(res: http.ServerResponse, status: number, payload: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
