/**
 * A fetch for JSON APIs: the model SDKs' requests and the channels' calls (Discord's REST,
 * Slack's Web API, Telegram's Bot API through grammy). Node's fetch spends about as much CPU on
 * one request as the SDK and hob together: a Request and its clone (the body stream teed in
 * two), the body written as an async iterable in chunked encoding, the response pumped through
 * several web streams. A request made of a URL, a text or bytes body, headers and a signal goes
 * out here through node:http(s) instead: the body as UTF-8 bytes with its length, in one write,
 * on the default keep-alive agents, and the answer comes back as a Response over the socket's
 * own stream. Half the CPU of a model request (bench/profile.ts). A body given as a Node stream
 * or an async iterable of bytes (grammy's multipart upload) is sent as it comes, chunked, as
 * node-fetch sends it.
 *
 * What this path does not do is left to Node's fetch: any other body (form data, a web stream,
 * a Blob), a Request object, another scheme. Redirects are followed as fetch follows them
 * (given bytes, fetch itself cannot: it hands the body over on the first send), or refused
 * when asked (`redirect: 'error'`); a streamed body cannot be sent twice, so a redirect that
 * would send it again is refused, as fetch refuses it. A text body goes to fetch as bytes too:
 * given a string, fetch copies it whole first, two bytes a character as soon as it holds one
 * beyond Latin-1 (~30 KB a model request that outlived the young generation). An abort ends the
 * request or the body with the signal's reason, as fetch does. The answer is asked for
 * uncompressed (fetch would decompress it; these answers are small).
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
  return inner ? bytesBody(inner) : lean(webAnswer);
}

/**
 * For a client that reads an answer's status, headers and whole body (the channel libraries'
 * JSON calls), not its body as a web stream: the answer is read straight from the socket's
 * stream, and the web streams a Response is made of, and Node's own undici that holds its
 * Headers and Response classes, are not loaded for it (~10 ms of a start on the way to the
 * first answers). Its `headers` (AnswerHeaders) are built when asked for.
 */
export function leanBodyFetch(): Fetch {
  return lean((incoming, status, empty, url) => new BodyAnswer(incoming, status, empty, url) as unknown as Response);
}

/**
 * For a client that reads an answer's body as it arrives (the model's stream of events): its
 * `body` is the socket's own stream, an async iterable of Buffers, not a web stream, so each
 * piece of the answer is not passed through the several web streams of a Response.
 */
export function leanStreamFetch(): Fetch {
  return lean((incoming, status, empty, url) => new StreamAnswer(incoming, status, empty, url) as unknown as Response);
}

function lean(answer: Answer): Fetch {
  // Looked up per call: a test or another library may replace the global fetch.
  const fallback = bytesBody((input, init) => globalThis.fetch(input, init));
  return (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const body = bodyOf(init.body);
    if (url === undefined || body === null || !/^https?:/i.test(url)) return fallback(input, init);
    return send(url, init, body, MAX_REDIRECTS, answer);
  };
}

/** The caller's view of an answer: its status, headers and body, with no body when `empty`. */
type Answer = (incoming: http.IncomingMessage, status: number, empty: boolean, url: string) => Response;

const webAnswer: Answer = (incoming, status, empty) => {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let at = 0; at + 1 < raw.length; at += 2) headers.append(raw[at] as string, raw[at + 1] as string);
  return new Response(empty ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), { status, statusText: incoming.statusMessage ?? '', headers });
};

/**
 * An answer's headers as a Headers gives them, without Node's Headers class (Node's own undici):
 * a name in any case; repeated ones joined with ", "; iterated by lower-case name in order,
 * each set-cookie on its own. Read-only, as a Response's are.
 */
export class AnswerHeaders {
  private readonly byName = new Map<string, string[]>();

  constructor(raw: readonly string[]) {
    for (let at = 0; at + 1 < raw.length; at += 2) {
      const name = (raw[at] as string).toLowerCase();
      const value = raw[at + 1] as string;
      const list = this.byName.get(name);
      if (list) list.push(value);
      else this.byName.set(name, [value]);
    }
  }

  get(name: string): string | null {
    return this.byName.get(name.toLowerCase())?.join(', ') ?? null;
  }

  has(name: string): boolean {
    return this.byName.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    return [...(this.byName.get('set-cookie') ?? [])];
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.byName.keys()].sort()) {
      const list = this.byName.get(name) as string[];
      if (name === 'set-cookie') for (const value of list) yield [name, value];
      else yield [name, list.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(each: (value: string, name: string, parent: AnswerHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) each.call(thisArg, value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/** A Response's status, headers and body reads, over the socket's own stream (leanBodyFetch). */
class BodyAnswer {
  readonly ok: boolean;
  readonly statusText: string;
  private read = false;
  private headerList: Headers | undefined;

  constructor(
    private readonly incoming: http.IncomingMessage,
    readonly status: number,
    private readonly empty: boolean,
    /** Where the answer came from, after any redirect (as a Response's `url`; a client may read it). */
    readonly url: string,
  ) {
    this.ok = status >= 200 && status < 300;
    this.statusText = incoming.statusMessage ?? '';
  }

  get headers(): Headers {
    return (this.headerList ??= new AnswerHeaders(this.incoming.rawHeaders) as unknown as Headers);
  }

  get bodyUsed(): boolean {
    return this.read;
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async text(): Promise<string> {
    return (await this.bytes()).toString('utf8');
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  private async bytes(): Promise<Buffer> {
    const body = this.take();
    if (body === null) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    // An abort destroys the stream with the signal's reason, which this throws.
    for await (const chunk of body) chunks.push(chunk);
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  }

  /** The body's stream, once; null when the answer has none. */
  protected take(): AsyncIterable<Buffer> | null {
    if (this.read) throw new TypeError('Body is unusable: Body has already been read');
    this.read = true;
    return this.empty ? null : (this.incoming as AsyncIterable<Buffer>);
  }
}

/** As BodyAnswer, with the body to read as it comes, once: `for await (const chunk of answer.body)` (leanStreamFetch). */
class StreamAnswer extends BodyAnswer {
  get body(): AsyncIterable<Buffer> | null {
    return this.take();
  }
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

function send(url: string, init: RequestInit, body: Body, redirectsLeft: number, answer: Answer): Promise<Response> {
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
        resolve(send(next.href, { ...init, headers: nextHeaders, ...(asGet ? { method: 'GET' } : {}) }, asGet ? undefined : body, redirectsLeft - 1, answer));
        return;
      }
      incoming.once('close', done);
      const empty = method === 'HEAD' || NO_BODY.has(status);
      if (empty) incoming.resume();
      resolve(answer(incoming, status, empty, url));
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
  // A plain object (grammy's, Slack's) is read without the Headers class, which would load
  // Node's undici; the SDKs hand a Headers already; anything else is read as fetch would.
  if (init === undefined || (typeof init === 'object' && Object.getPrototypeOf(init) === Object.prototype)) {
    for (const [given, value] of Object.entries((init ?? {}) as Record<string, string | undefined>)) {
      if (value === undefined) continue;
      // Names differing only in case are one header, their values joined as Headers joins them.
      const name = given.toLowerCase();
      record[name] = record[name] === undefined ? String(value) : `${record[name]}, ${value}`;
    }
    return record;
  }
  (init instanceof Headers ? init : new Headers(init)).forEach((value, name) => (record[name] = value));
  return record;
}
