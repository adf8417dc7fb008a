/**
 * A fetch for JSON APIs: the model SDKs' requests and a channel's REST calls (Discord's REST,
 * Slack's Web API). Node's fetch
 * spends about as much CPU on one request as the SDK and hob together: a Request and its clone
 * (the body stream teed in two), the body written as an async iterable in chunked encoding, the
 * response pumped through several web streams. A request made of a URL, a text or bytes body,
 * headers and a signal goes out here through node:http(s) instead: the body as UTF-8 bytes with
 * its length, in one write, on the default keep-alive agents, and the answer comes back as a
 * Response over the socket's own stream. Half the CPU of a model request (bench/profile.ts).
 *
 * A body given as a Node stream or an async iterable of bytes (grammy's multipart upload) is
 * sent as it comes, in chunked encoding, as node-fetch sends it.
 * What this path does not do is left to Node's fetch: any other body (form data, a web stream,
 * a Blob), a Request object, another scheme. Redirects are followed as fetch follows them
 * (given bytes, fetch itself cannot: it hands the body over on the first send); a streamed
 * body cannot be sent twice, so a redirect that would send it again is refused, as fetch
 * refuses it. A text body goes to fetch as
 * bytes too: given a string, fetch copies it whole first, two bytes a character as soon as it
 * holds one beyond Latin-1 (~30 KB a model request that outlived the young generation).
 * An abort ends the request or the body with the signal's reason, as fetch does. The answer
 * is asked for uncompressed (fetch would decompress it; these answers are small).
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

type Fetch = typeof globalThis.fetch;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses a Response may not have a body with. */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/** `inner`: a fetch to use instead (tests); it gets text bodies as bytes. */
export function leanFetch(inner?: Fetch): Fetch {
  if (inner) return bytesBody(inner);
  // Looked up per call: a test or another library may replace the global fetch.
  const fallback = bytesBody((input, init) => globalThis.fetch(input, init));
  return (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const body = bodyOf(init.body);
    if (url === undefined || body === null || !/^https?:/i.test(url)) return fallback(input, init);
    return send(url, init, body, MAX_REDIRECTS);
  };
}

/** Bytes, a stream of bytes, none, or null: a body this path leaves to fetch. */
function bodyOf(given: RequestInit['body'] | Readable | AsyncIterable<Uint8Array>): Body | null {
  if (given === undefined || given === null) return undefined;
  if (typeof given === 'string') return Buffer.from(given, 'utf8');
  if (given instanceof Uint8Array) return given;
  // A web stream is async iterable too, but fetch sends it (with `duplex`).
  if (given instanceof Readable || (typeof given === 'object' && Symbol.asyncIterator in given && !(given instanceof ReadableStream))) return given as Readable | AsyncIterable<Uint8Array>;
  return null;
}

type Body = Uint8Array | Readable | AsyncIterable<Uint8Array> | undefined;

/** As many as fetch follows. */
const MAX_REDIRECTS = 20;

function bytesBody(inner: Fetch): Fetch {
  return (input, init) => (typeof init?.body === 'string' ? inner(input, { ...init, body: Buffer.from(init.body, 'utf8') }) : inner(input, init));
}

function send(url: string, init: RequestInit, body: Body, redirectsLeft: number): Promise<Response> {
  const { signal } = init;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const method = (init.method ?? 'GET').toUpperCase();
  const headers = headerRecord(init.headers);
  if (body instanceof Uint8Array) headers['content-length'] = String(body.byteLength);
  // fetch would undo a compression; here the answer is asked for as it is (an SSE stream of small events).
  headers['accept-encoding'] ??= 'identity';
  return new Promise((resolve, reject) => {
    let response: http.IncomingMessage | undefined;
    const abort = () => {
      request.destroy(signal?.reason);
      response?.destroy(signal?.reason);
    };
    const done = () => signal?.removeEventListener('abort', abort);
    const request = (/^https:/i.test(url) ? https : http).request(url, { method, headers }, (incoming) => {
      response = incoming;
      const status = incoming.statusCode ?? 0;
      const location = incoming.headers.location;
      if (REDIRECTS.has(status) && location !== undefined && init.redirect === 'error') {
        // As fetch refuses it (Slack's Web API client asks so).
        done();
        incoming.resume();
        reject(new TypeError('fetch failed', { cause: new Error(`unexpected redirect from ${url}`) }));
        return;
      }
      if (REDIRECTS.has(status) && location !== undefined && (init.redirect ?? 'follow') === 'follow') {
        done();
        incoming.resume();
        if (redirectsLeft === 0) return reject(new TypeError(`too many redirects from ${url}`));
        // As fetch does: 303, and 301 or 302 after a POST, go on as a GET without the body.
        const asGet = status === 303 || ((status === 301 || status === 302) && method === 'POST');
        if (!asGet && body !== undefined && !(body instanceof Uint8Array)) {
          reject(new TypeError('fetch failed', { cause: new Error(`${url} moved (${status}), and a streamed body cannot be sent again`) }));
          return;
        }
        const next = new URL(location, url);
        // Credentials stay with their origin, as fetch keeps them.
        const nextHeaders = { ...headers };
        delete nextHeaders['content-length'];
        if (next.origin !== new URL(url).origin) for (const name of ['authorization', 'proxy-authorization', 'cookie']) delete nextHeaders[name];
        resolve(send(next.href, { ...init, headers: nextHeaders, ...(asGet ? { method: 'GET' } : {}) }, asGet ? undefined : body, redirectsLeft - 1));
        return;
      }
      const responseHeaders = new Headers();
      const raw = incoming.rawHeaders;
      for (let at = 0; at + 1 < raw.length; at += 2) responseHeaders.append(raw[at] as string, raw[at + 1] as string);
      incoming.once('close', done);
      const empty = method === 'HEAD' || NO_BODY.has(status);
      if (empty) incoming.resume();
      resolve(new Response(empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), { status, statusText: incoming.statusMessage ?? '', headers: responseHeaders }));
    });
    signal?.addEventListener('abort', abort, { once: true });
    request.once('error', (error) => {
      done();
      reject(error);
    });
    if (body === undefined || body instanceof Uint8Array) request.end(body);
    // A body that fails midway ends the request with its error (the 'error' above).
    else pipeline(body instanceof Readable ? body : Readable.from(body, { objectMode: false }), request).catch(() => undefined);
  });
}

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  // The SDKs hand a Headers already; anything else is read as fetch would read it.
  (init instanceof Headers ? init : new Headers(init)).forEach((value, name) => (record[name] = value));
  return record;
}
