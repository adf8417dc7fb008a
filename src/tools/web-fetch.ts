import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { z } from 'zod';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';
import { blockedAddressReason, blockedHostnameReason } from './ssrf-guard.js';

/** Resolves a host name to every address it has (like dns.lookup with all: true). */
export type WebFetchLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export type WebFetchOptions = {
  /** Name resolution; default: the system resolver (dns.lookup, all addresses). */
  lookup?: WebFetchLookup;
  /** Bytes read from a response body before it is cut; default 2 MB. */
  maxBytes?: number;
  /** Time for the whole fetch, redirects included; default 20 s. */
  timeoutMs?: number;
  /** Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  /**
   * TEST ONLY: exact `address:port` destinations (e.g. `127.0.0.1:43117`, a fake server) that
   * may be reached although the address is private. builtinTools() does not accept this field,
   * so configuration cannot switch the guard off.
   */
  unsafeTestOnlyAllowedDestinations?: readonly string[];
};

const DEFAULT_MAX_CHARS = 20_000;
const MAX_CHARS_LIMIT = 100_000;

const inputSchema = z.object({
  url: z.string().min(1).describe('http or https URL of a public page.'),
  max_chars: z
    .number()
    .int()
    .min(100)
    .max(MAX_CHARS_LIMIT)
    .optional()
    .describe(`Characters of text to return (default ${DEFAULT_MAX_CHARS}).`),
});

/** A fetch the guard will not make; the message names the reason. */
class RefusedError extends Error {}

type Destination = { hostname: string; port: number; address: string; family: 4 | 6 };
type Fetched = { url: URL; response: IncomingMessage; body: Buffer; cut: boolean };

/**
 * `web_fetch`: GETs a public http(s) URL and returns readable text.
 *
 * SSRF design. Every hop (the first URL and each redirect, followed by hand, max 5) goes
 * through `checkDestination`:
 *  1. only http: and https:; the WHATWG URL parser has already turned decimal, octal, hex and
 *     short IPv4 forms into dotted quads and bracketed IPv6 into a plain literal;
 *  2. an IP literal must be public (ssrf-guard.ts, ipaddr.js ranges, IPv4 inside IPv6 judged
 *     by its IPv4 part); a name must not be localhost/metadata/private-use, and EVERY address
 *     it resolves to must be public;
 *  3. the connection is pinned to the checked address through the `lookup` option of
 *     http(s).request, so a second DNS answer (rebinding) is never consulted. TLS still
 *     verifies the certificate against the host name.
 * Bodies stream and stop at maxBytes (after decompression); the whole fetch has a deadline
 * and follows ctx.signal. HTML becomes text (html-to-text, links kept as [url]); JSON and
 * text pass through; other types are refused.
 */
export function webFetchTool(options: WebFetchOptions = {}) {
  const settings = {
    lookup: options.lookup ?? systemLookup,
    maxBytes: options.maxBytes ?? 2 * 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 20_000,
    maxRedirects: options.maxRedirects ?? 5,
    userAgent: options.userAgent ?? 'hob/0.1 (web_fetch)',
    allowed: new Set(options.unsafeTestOnlyAllowedDestinations ?? []),
  };
  return defineTool({
    name: 'web_fetch',
    description:
      'Fetch a public web page (http/https) and return it as text: HTML is converted to readable text with ' +
      'links as [url]; JSON and plain text are returned as is. Private and local addresses are refused.',
    input: inputSchema,
    readOnly: true,
    async run(input, ctx): Promise<ToolOutput> {
      const deadline = AbortSignal.timeout(settings.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, deadline]);
      let fetched: Fetched;
      try {
        fetched = await fetchFollowingRedirects(input.url, settings, signal);
      } catch (error) {
        if (error instanceof RefusedError) return { content: `Refused to fetch ${input.url}: ${error.message}`, isError: true };
        if (ctx.signal.aborted) return { content: `Fetching ${input.url} was cancelled.`, isError: true };
        if (deadline.aborted) {
          return { content: `Fetching ${input.url} timed out after ${settings.timeoutMs / 1000} s.`, isError: true };
        }
        return { content: `Could not fetch ${input.url}: ${(error as Error).message}`, isError: true };
      }
      return present(fetched, input.max_chars ?? DEFAULT_MAX_CHARS, settings.maxBytes);
    },
  });
}

type Settings = {
  lookup: WebFetchLookup;
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  allowed: Set<string>;
};

async function systemLookup(hostname: string): Promise<{ address: string; family: number }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

async function fetchFollowingRedirects(rawUrl: string, settings: Settings, signal: AbortSignal): Promise<Fetched> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new RefusedError('it is not a valid absolute URL');
  }
  for (let hop = 0; hop <= settings.maxRedirects; hop += 1) {
    const destination = await checkDestination(url, settings, signal).catch((error: unknown) => {
      if (hop > 0 && error instanceof RefusedError) {
        throw new RefusedError(`it redirected to ${url.href}, and ${error.message}`);
      }
      throw error;
    });
    const response = await request(url, destination, settings.userAgent, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      response.destroy();
      try {
        url = new URL(location, url);
      } catch {
        throw new RefusedError(`it redirected to an invalid URL (${location})`);
      }
      continue;
    }
    const { body, cut } = await readBody(response, settings.maxBytes);
    return { url, response, body, cut };
  }
  throw new RefusedError(`it redirected more than ${settings.maxRedirects} times`);
}

async function checkDestination(url: URL, settings: Settings, signal: AbortSignal): Promise<Destination> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefusedError(`only http and https URLs can be fetched, not ${url.protocol}`);
  }
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const allowedForTest = (address: string) => settings.allowed.has(`${address}:${port}`);
  const literal = isIP(hostname);
  if (literal !== 0) {
    const reason = blockedAddressReason(hostname);
    if (reason !== undefined && !allowedForTest(hostname)) throw new RefusedError(reason);
    return { hostname, port, address: hostname, family: literal === 6 ? 6 : 4 };
  }
  const nameReason = blockedHostnameReason(hostname);
  if (nameReason !== undefined) throw new RefusedError(nameReason);
  let addresses: { address: string; family: number }[];
  try {
    addresses = await untilAborted(settings.lookup(hostname), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new Error(`could not resolve ${hostname} (${(error as Error).message})`);
  }
  if (addresses.length === 0) throw new Error(`${hostname} has no addresses`);
  // One private answer is enough to refuse: the attacker picks which one a client would use.
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason !== undefined && !allowedForTest(address)) throw new RefusedError(`${hostname} resolves to ${reason}`);
  }
  const first = addresses[0];
  if (first === undefined) throw new Error(`${hostname} has no addresses`);
  return { hostname, port, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}

/** The system resolver cannot be cancelled; stop waiting for it when the fetch is over. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function request(url: URL, destination: Destination, userAgent: string, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  // Pinning: the socket connects to the address checked above, whatever DNS says now.
  const pinned = ((_host: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions.all) callback(null, [{ address: destination.address, family: destination.family }]);
    else callback(null, destination.address, destination.family);
  }) as unknown as LookupFunction;
  return new Promise((resolve, reject) => {
    const outgoing = client.request(
      {
        protocol: url.protocol,
        hostname: destination.hostname,
        port: destination.port,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: {
          'user-agent': userAgent,
          accept: 'text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        lookup: pinned,
        // No pooled sockets: each hop connects to its own checked address.
        agent: false,
        signal,
      },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Reads at most maxBytes of the decoded body; a compressed bomb stops at the same cap. */
async function readBody(response: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; cut: boolean }> {
  const encoding = (response.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  let stream: Readable = response;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = response.pipe(zlib.createGunzip());
  else if (encoding === 'deflate') stream = response.pipe(zlib.createInflate());
  else if (encoding === 'br') stream = response.pipe(zlib.createBrotliDecompress());
  else if (encoding !== 'identity') {
    response.destroy();
    throw new RefusedError(`the response uses an unsupported content encoding (${encoding})`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  let cut = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = maxBytes - total;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      total += Math.min(chunk.length, room);
      if (total >= maxBytes) {
        cut = true;
        break;
      }
    }
  } finally {
    stream.destroy();
    response.destroy();
  }
  return { body: Buffer.concat(chunks), cut };
}

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-yaml',
  'application/yaml',
  'application/toml',
  'application/x-ndjson',
]);

async function present(fetched: Fetched, maxChars: number, maxBytes: number): Promise<ToolOutput> {
  const { url, response, body } = fetched;
  const status = response.statusCode ?? 0;
  const contentType = response.headers['content-type'] ?? '';
  const mime = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  const isHtml = mime === 'text/html' || mime === 'application/xhtml+xml';
  const isText =
    mime.startsWith('text/') || TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml') ||
    (mime === '' && !body.subarray(0, 1024).includes(0));
  if (!isHtml && !isText) {
    return {
      content: `Refused to return ${url.href}: its content type is ${mime || 'binary'}, not text. web_fetch only returns HTML, JSON and text.`,
      isError: true,
    };
  }
  const decoded = decode(body, contentType);
  const text = isHtml ? await htmlToText(decoded, url) : decoded;
  const shown = text.length > maxChars
    ? `${text.slice(0, maxChars)}\n\n[text cut at ${maxChars} of ${text.length} characters; call again with a larger max_chars (up to ${MAX_CHARS_LIMIT}) to see more]`
    : text;
  const notes = fetched.cut ? `\n[the response was larger than ${Math.round(maxBytes / 1024)} KB and was cut there]` : '';
  const header = `URL: ${url.href}\nStatus: ${status} ${response.statusMessage ?? ''}\nContent-Type: ${mime || '(none)'}\n\n`;
  return { content: `${header}${shown}${notes}`, isError: status >= 400 };
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body); // unknown charset label
  }
}

/** html-to-text is loaded on the first HTML page, not at start-up (it costs ~75 ms to import). */
async function htmlToText(html: string, base: URL): Promise<string> {
  const { convert } = await import('html-to-text');
  const absolute = (href: string) => {
    try {
      return new URL(href, base).href;
    } catch {
      return href;
    }
  };
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'noscript', format: 'skip' },
      { selector: 'svg', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { linkBrackets: ['[', ']'], hideLinkHrefIfSameAsText: true, pathRewrite: absolute } },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
    ],
  }).trim();
}
