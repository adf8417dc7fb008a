/**
 * One loopback server speaking the four search providers' formats: Brave's
 * `/res/v1/web/search` JSON, Tavily's `POST /search`, SearXNG's `/search?format=json` and
 * DuckDuckGo's HTML results page (`POST /html/`). `mode` switches every route to an empty
 * result or an error.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeSearchMode = 'results' | 'empty' | 'error';

export type FakeWebSearch = {
  baseUrl: string;
  mode: FakeSearchMode;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
};

export const FAKE_RESULTS = [
  { title: 'Node.js 20 release notes', url: 'https://nodejs.org/en/blog/release/v20.0.0', snippet: 'Node.js 20 comes with the permission model & a stable test runner.' },
  { title: 'Node.js — About', url: 'https://nodejs.org/en/about', snippet: 'An asynchronous event-driven JavaScript runtime.' },
];

function duckDuckGoPage(results: typeof FAKE_RESULTS): string {
  const items = results
    .map(
      (result) => `<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(result.url)}&amp;rut=abc">${result.title.replace('Node.js', '<b>Node.js</b>')}</a></h2>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(result.url)}">${result.snippet.replace('&', '&amp;')}</a>
  </div>
</div>`,
    )
    .join('\n');
  return `<!DOCTYPE html><html><body><div id="links" class="results">${items}</div></body></html>`;
}

export async function startFakeWebSearch(): Promise<FakeWebSearch> {
  const fake: Omit<FakeWebSearch, 'baseUrl' | 'close'> = { mode: 'results', requests: [] };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers, body });
      if (fake.mode === 'error') {
        res.writeHead(url.pathname === '/html/' ? 503 : 429, { 'content-type': 'application/json' }).end('{"error":"rate limited"}');
        return;
      }
      const results = fake.mode === 'empty' ? [] : FAKE_RESULTS;
      const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      switch (url.pathname) {
        case '/res/v1/web/search':
          return json({ type: 'search', query: { original: url.searchParams.get('q') }, web: { type: 'search', results: results.map((r) => ({ title: r.title, url: r.url, description: r.snippet.replace('permission model', '<strong>permission model</strong>') })) } });
        case '/search':
          if (req.method === 'POST') return json({ query: JSON.parse(body || '{}').query, results: results.map((r) => ({ title: r.title, url: r.url, content: r.snippet, score: 0.9 })) });
          return json({ query: url.searchParams.get('q'), number_of_results: results.length, results: results.map((r) => ({ title: r.title, url: r.url, content: r.snippet, engine: 'duckduckgo' })) });
        case '/html/':
          res.writeHead(200, { 'content-type': 'text/html' }).end(results.length ? duckDuckGoPage(results) : '<html><body><div class="no-results">No results.</div></body></html>');
          return;
        default:
          res.writeHead(404).end('not found');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
