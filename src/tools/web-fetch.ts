import { z } from 'zod';
import type { Fetched, WebFetchLookup } from './public-get.js';
import { defineTool } from './tool.js';
import type { ToolOutput } from './tool.js';

export type { WebFetchLookup } from './public-get.js';

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

/**
 * `web_fetch`: GETs a public http(s) URL and returns readable text.
 *
 * The GET reaches public addresses only, every redirect checked and the connection pinned
 * to the checked address (public-get.ts, the SSRF design); the body stops at maxBytes and the
 * whole fetch has a deadline and follows ctx.signal. HTML becomes text (html-to-text, links
 * kept as [url]); JSON and text pass through; other types are refused.
 */
export function webFetchTool(options: WebFetchOptions = {}) {
  const settings = {
    lookup: options.lookup,
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
      // The guarded GET (ipaddr.js, the resolver, zlib) loads with the first fetch, not at start-up.
      const { getPublic, RefusedError, systemLookup } = await import('./public-get.js');
      let fetched: Fetched;
      try {
        fetched = await getPublic(input.url, { ...settings, lookup: settings.lookup ?? systemLookup }, signal);
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
