/**
 * A GET that reaches only public addresses (the SSRF guard of web_fetch). Every hop (the
 * first URL and each redirect, followed by hand) goes through `checkDestination`:
 *  1. only http: and https:; the WHATWG URL parser has already turned decimal, octal, hex and
 *     short IPv4 forms into dotted quads and bracketed IPv6 into a plain literal;
 *  2. an IP literal must be public (ssrf-guard.ts, ipaddr.js ranges, IPv4 inside IPv6 judged
 *     by its IPv4 part); a name must not be localhost/metadata/private-use, and EVERY address
 *     it resolves to must be public;
 *  3. the connection is pinned to the checked address through the `lookup` option of
 *     http(s).request, so a second DNS answer (rebinding) is never consulted. TLS still
 *     verifies the certificate against the host name.
 * Bodies stream and stop at maxBytes after decompression, so a compressed bomb stops too.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { blockedAddressReason, blockedHostnameReason } from './ssrf-guard.js';

/** Resolves a host name to every address it has (like dns.lookup with all: true). */
export type WebFetchLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** A fetch the guard will not make; the message names the reason. */
export class RefusedError extends Error {}

type Destination = { hostname: string; port: number; address: string; family: 4 | 6 };
/** The last hop's response and its body (`cut` when it was longer than maxBytes). */
export type Fetched = { url: URL; response: IncomingMessage; body: Buffer; cut: boolean };

/** What a public GET needs: how to resolve names, how much to read, how far to follow. */
export type PublicGetSettings = {
  lookup: WebFetchLookup;
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /** TEST ONLY: `address:port` destinations reached although private (web_fetch's unsafeTestOnlyAllowedDestinations). */
  allowed: Set<string>;
};

/** The system resolver (dns.lookup, every address, in its own order). */
export async function systemLookup(hostname: string): Promise<{ address: string; family: number }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

/** GETs a URL, following redirects by hand; throws RefusedError for any hop the guard refuses. */
export async function getPublic(rawUrl: string, settings: PublicGetSettings, signal: AbortSignal): Promise<Fetched> {
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

async function checkDestination(url: URL, settings: PublicGetSettings, signal: AbortSignal): Promise<Destination> {
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
