/**
 * The web channel's HTTP hygiene: which requests are answered at all (Host, Origin, fetch
 * metadata), the session cookie's form, bodies read within limits, and the headers every
 * response carries (a strict Content-Security-Policy among them).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSite } from './config.js';

/** No inline script or style, nothing from elsewhere, never in a frame. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** A request refused with a status and a sentence for the page. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * Why a request must not be answered, or undefined. Every request names one of the site's
 * hosts (DNS rebinding names another). For the API: a state-changing request carries the
 * page's own Origin (browsers always send one with POST); a GET (the event stream, a file)
 * may omit it, but one that names another origin, or that the browser marks as coming from
 * another site, is refused. The session cookie is SameSite=Strict as well, but other ports of
 * the same host count as the same site, so the Origin is what tells them apart.
 */
export function refusalOf(req: IncomingMessage, site: WebSite, api: boolean): string | undefined {
  const host = req.headers.host ?? '';
  if (!site.hosts.has(host.toLowerCase())) return `unknown host "${host}"`;
  if (!api) return undefined;
  const origin = req.headers.origin;
  const safe = req.method === 'GET' || req.method === 'HEAD';
  if (origin === undefined) {
    if (!safe) return 'a request without an Origin header cannot change anything';
  } else if (!site.origins.has(origin)) {
    return `requests from ${origin} are not accepted`;
  }
  const fetchSite = req.headers['sec-fetch-site'];
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return `a ${fetchSite} request is not accepted`;
  return undefined;
}

export function cookieName(site: WebSite): string {
  // `__Host-`: the browser only keeps it when Secure, for the whole site, with no Domain.
  return site.secure ? '__Host-hob_session' : 'hob_session';
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export function sessionCookie(site: WebSite, token: string, maxAgeSeconds: number): string {
  return `${cookieName(site)}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${site.secure ? '; Secure' : ''}`;
}

export function clearedCookie(site: WebSite): string {
  return `${cookieName(site)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${site.secure ? '; Secure' : ''}`;
}

/** The whole body, refused with 413 past `limit` bytes (by its Content-Length or as it streams). */
export async function readBody(req: IncomingMessage, limit: number, what: string): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw new HttpError(413, `${what} is ${megabytes(declared)}; the limit is ${megabytes(limit)}.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `${what} is over ${megabytes(limit)}, the limit.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A JSON object body. Requiring the JSON type also means another origin's page needs a preflight, which it never gets. */
export async function readJson(req: IncomingMessage, limit = 256 * 1024): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'Send JSON (Content-Type: application/json).');
  const body = await readBody(req, limit, 'The request');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'The request is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'Send a JSON object.');
  return value as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
