/**
 * `web_search { query, limit? }`: title, URL and snippet per result, from the configured
 * provider — Brave, Tavily, SearXNG or (with none configured) DuckDuckGo's HTML results
 * page. A provider error is a result the model can read, never a crash. Reading a result
 * goes through web_fetch and its address rules.
 */
import { z } from 'zod';
import type { WebSearchConfig, WebSearchProvider } from '../config/extensions-schema.js';
import { errorMessage } from '../core/errors.js';
import { defineTool } from './tool.js';

export type SearchResult = { title: string; url: string; snippet: string };

export type WebSearchSettings = Pick<WebSearchConfig, 'provider' | 'api_key' | 'base_url' | 'timeout_seconds' | 'max_results'> & {
  fetch?: typeof fetch;
};

const DEFAULT_BASE_URL: Record<WebSearchProvider, string | undefined> = {
  duckduckgo: 'https://html.duckduckgo.com',
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
  searxng: undefined,
};

const NAMES: Record<WebSearchProvider, string> = { duckduckgo: 'DuckDuckGo', brave: 'Brave Search', tavily: 'Tavily', searxng: 'SearXNG' };

/** The provider answered, but not with something hob can read. */
class ProviderError extends Error {}

export function webSearchTool(settings: WebSearchSettings) {
  const fetchImpl = settings.fetch ?? globalThis.fetch;
  const provider = settings.provider;
  const baseUrl = settings.base_url ?? DEFAULT_BASE_URL[provider] ?? '';
  return defineTool({
    name: 'web_search',
    description: 'Search the web. Returns title, URL and snippet per result; read a result with web_fetch.',
    input: z.strictObject({
      query: z.string().trim().min(1).max(400).describe('What to search for'),
      limit: z.number().int().min(1).max(20).optional().describe(`Results to return (default ${settings.max_results})`),
    }),
    readOnly: true,
    async run({ query, limit }, ctx) {
      const count = limit ?? settings.max_results;
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(settings.timeout_seconds * 1000)]);
      let results: SearchResult[];
      try {
        results = (await search(provider, { query, count, baseUrl, apiKey: settings.api_key, fetch: fetchImpl, signal })).slice(0, count);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        const why = signal.aborted ? `it did not answer within ${settings.timeout_seconds} s` : errorMessage(error);
        return { content: `The search failed: ${NAMES[provider]} ${error instanceof ProviderError ? '' : 'could not be reached: '}${why}. Try again later or with other words.`, isError: true };
      }
      if (results.length === 0) return `No results for "${query}" on ${NAMES[provider]}. Try other or fewer words.`;
      return results.map((result, index) => `${index + 1}. ${result.title}\n   ${result.url}${result.snippet ? `\n   ${result.snippet}` : ''}`).join('\n');
    },
  });
}

type SearchRequest = { query: string; count: number; baseUrl: string; apiKey?: string; fetch: typeof fetch; signal: AbortSignal };

function search(provider: WebSearchProvider, request: SearchRequest): Promise<SearchResult[]> {
  switch (provider) {
    case 'brave':
      return braveSearch(request);
    case 'tavily':
      return tavilySearch(request);
    case 'searxng':
      return searxngSearch(request);
    case 'duckduckgo':
      return duckDuckGoSearch(request);
  }
}

async function braveSearch(request: SearchRequest): Promise<SearchResult[]> {
  const url = new URL('/res/v1/web/search', request.baseUrl);
  url.search = new URLSearchParams({ q: request.query, count: String(Math.min(request.count, 20)) }).toString();
  const body = await getJson(request, url, { accept: 'application/json', 'x-subscription-token': request.apiKey ?? '' });
  const results = field(field(body, 'web'), 'results');
  return list(results).map((item) => ({ title: text(field(item, 'title')), url: text(field(item, 'url')), snippet: stripTags(text(field(item, 'description'))) }));
}

async function tavilySearch(request: SearchRequest): Promise<SearchResult[]> {
  const response = await request.fetch(new URL('/search', request.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${request.apiKey ?? ''}` },
    body: JSON.stringify({ query: request.query, max_results: request.count, search_depth: 'basic' }),
    signal: request.signal,
  });
  const body = await readJson(response);
  return list(field(body, 'results')).map((item) => ({ title: text(field(item, 'title')), url: text(field(item, 'url')), snippet: text(field(item, 'content')) }));
}

async function searxngSearch(request: SearchRequest): Promise<SearchResult[]> {
  const url = new URL(`${request.baseUrl}/search`);
  url.search = new URLSearchParams({ q: request.query, format: 'json' }).toString();
  const body = await getJson(request, url, { accept: 'application/json' });
  return list(field(body, 'results')).map((item) => ({ title: text(field(item, 'title')), url: text(field(item, 'url')), snippet: text(field(item, 'content')) }));
}

/** The HTML results page (no key needed): `a.result__a` links and `.result__snippet` texts. */
async function duckDuckGoSearch(request: SearchRequest): Promise<SearchResult[]> {
  const response = await request.fetch(new URL('/html/', request.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Mozilla/5.0 (compatible; hob)' },
    body: new URLSearchParams({ q: request.query }).toString(),
    signal: request.signal,
  });
  if (!response.ok) throw new ProviderError(`answered HTTP ${response.status}`);
  const html = await response.text();
  if (/anomaly|captcha/i.test(html) && !html.includes('result__a')) throw new ProviderError('asked for a captcha (too many searches); configure another provider under tools.web_search');
  const results: SearchResult[] = [];
  const blocks = html.split(/<div[^>]+class="[^"]*\bresult\b[^"]*"/).slice(1);
  for (const block of blocks) {
    const link = /<a[^>]+class="[^"]*result__a[^"]*"[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/.exec(block) ?? /<a[^>]+href="([^"]*)"[^>]+class="[^"]*result__a[^"]*"[^>]*>([\s\S]*?)<\/a>/.exec(block);
    if (!link) continue;
    const snippet = /class="[^"]*result__snippet[^"]*"[^>]*>([\s\S]*?)<\/(?:a|div|td)>/.exec(block);
    const url = realUrl(decodeEntities(link[1] as string));
    if (!url || results.some((result) => result.url === url)) continue;
    results.push({ title: stripTags(link[2] as string), url, snippet: snippet ? stripTags(snippet[1] as string) : '' });
  }
  return results;
}

/** DuckDuckGo wraps result links as `//duckduckgo.com/l/?uddg=<encoded target>`; ads point back at itself. */
function realUrl(href: string): string | undefined {
  try {
    const url = new URL(href, 'https://duckduckgo.com');
    const target = url.searchParams.get('uddg');
    if (target) return target;
    if (url.hostname.endsWith('duckduckgo.com')) return undefined;
    return url.toString();
  } catch {
    return undefined;
  }
}

async function getJson(request: SearchRequest, url: URL, headers: Record<string, string>): Promise<unknown> {
  return readJson(await request.fetch(url, { headers, signal: request.signal }));
}

async function readJson(response: Response): Promise<unknown> {
  const body = await response.text();
  if (!response.ok) {
    const hint = response.status === 401 || response.status === 403 ? ' (check tools.web_search.api_key)' : response.status === 429 ? ' (rate limited)' : '';
    throw new ProviderError(`answered HTTP ${response.status}${hint}`);
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new ProviderError('answered with something that is not JSON');
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value.filter((item) => typeof field(item, 'url') === 'string') : [];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function stripTags(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim();
}

function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&nbsp;', ' ')
    .replaceAll('&amp;', '&');
}
