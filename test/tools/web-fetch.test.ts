import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtins.js';
import type { AnyTool } from '../../src/tools/tool.js';
import { webFetchTool } from '../../src/tools/web-fetch.js';
import type { WebFetchLookup } from '../../src/tools/web-fetch.js';
import { makeContext, runTool } from './tool-harness.js';

const PAGE = `<!doctype html><html><head><title>Fake</title><style>body { color: red }</style>
<script>window.secret = "do-not-show";</script></head>
<body><nav><a href="/menu">Menu item</a></nav>
<h1>Welcome</h1><p>Read <a href="/docs/intro">the intro</a> first.</p>
<img src="/logo.png" alt="logo"><ul><li>one</li><li>two</li></ul></body></html>`;

let server: http.Server;
let port = 0;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const route = request.url ?? '/';
    if (route === '/page.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (route === '/data.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"items":[1,2]}');
    } else if (route === '/gzip.html') {
      response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync('<p>squeezed</p>'));
    } else if (route === '/big.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('y'.repeat(3 * 1024 * 1024));
    } else if (route === '/image.png') {
      response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]));
    } else if (route === '/missing') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    } else if (route === '/redirect-ok') {
      response.writeHead(302, { location: '/page.html' }).end();
    } else if (route === '/redirect-local') {
      response.writeHead(302, { location: 'http://127.0.0.1/' }).end();
    } else if (route === '/redirect-metadata') {
      response.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    } else if (route.startsWith('/loop')) {
      response.writeHead(302, { location: `/loop${route.length}` }).end();
    } else if (route === '/slow') {
      // Never answers: the fetch must give up on its own.
    } else {
      response.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A resolver from a fixed table; unknown names fail, so no test touches real DNS. */
function fakeLookup(table: Record<string, string[]>, calls: string[] = []): WebFetchLookup {
  return async (hostname) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const fetchWith = (tool: AnyTool, url: string, extra: Record<string, unknown> = {}) =>
  runTool(tool, { url, ...extra }, makeContext('/nonexistent-workspace'));

describe('web_fetch refuses private and local destinations (real guard, no allowlist)', () => {
  const guarded = webFetchTool({
    lookup: fakeLookup({
      'rebind.test': ['127.0.0.1'],
      'v6-loopback.test': ['::1'],
      'mixed.test': ['93.184.215.14', '10.1.2.3'],
      'metadata-alias.test': ['169.254.169.254'],
    }),
  }) as AnyTool;

  const corpus: [url: string, reason: RegExp][] = [
    ['http://127.0.0.1/', /loopback/],
    ['http://2130706433/', /127\.0\.0\.1 is a loopback/],
    ['http://0177.0.0.1/', /127\.0\.0\.1 is a loopback/],
    ['http://0x7f000001/', /127\.0\.0\.1 is a loopback/],
    ['http://127.1/', /127\.0\.0\.1 is a loopback/],
    ['http://evil.example@127.0.0.1/', /loopback/],
    ['http://[::1]/', /::1 is a loopback/],
    ['http://[::ffff:127.0.0.1]/', /IPv4-mapped IPv6 address of 127\.0\.0\.1 is a loopback/],
    ['http://[::ffff:7f00:1]/', /IPv4-mapped IPv6 address of 127\.0\.0\.1/],
    ['http://[::]/', /unspecified/],
    ['http://[::7f00:1]/', /outside the global unicast range/],
    ['http://169.254.169.254/latest/meta-data/', /link-local/],
    ['http://2852039166/', /169\.254\.169\.254 is a link-local/],
    ['https://[::ffff:169.254.169.254]/', /IPv4-mapped .*link-local/],
    ['http://169.254.10.20/', /link-local/],
    ['http://metadata.google.internal/computeMetadata/v1/', /cloud metadata service/],
    ['http://localhost:8080/', /localhost name/],
    ['http://LOCALHOST./', /localhost name/],
    ['http://foo.localhost/', /localhost name/],
    ['http://printer.local/', /private-network name/],
    ['http://intranet/', /no domain/],
    ['http://0.0.0.0/', /this network/],
    ['http://0/', /this network/],
    ['http://10.0.0.1/', /private network/],
    ['http://172.16.5.4/', /private network/],
    ['http://172.31.255.255/', /private network/],
    ['http://192.168.1.1/', /private network/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://224.0.0.1/', /multicast/],
    ['http://255.255.255.255/', /broadcast/],
    ['http://240.0.0.1/', /reserved/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fc00::1]/', /unique-local/],
    ['http://[fd12:3456::1]/', /unique-local/],
    ['http://[ff02::1]/', /multicast/],
    ['http://[64:ff9b::a00:1]/', /NAT64 address of 10\.0\.0\.1 is a private/],
    ['http://[2002:7f00:1::]/', /6to4 address of 127\.0\.0\.1/],
    ['http://rebind.test/', /rebind\.test resolves to 127\.0\.0\.1 is a loopback/],
    ['http://v6-loopback.test/', /resolves to ::1 is a loopback/],
    ['http://mixed.test/', /mixed\.test resolves to 10\.1\.2\.3 is a private/],
    ['http://metadata-alias.test/', /resolves to 169\.254\.169\.254 is a link-local/],
    ['file:///etc/passwd', /only http and https.*file:/],
    ['ftp://example.com/file', /only http and https.*ftp:/],
    ['gopher://example.com/', /only http and https.*gopher:/],
    ['data:text/plain,hello', /only http and https.*data:/],
    ['not a url', /not a valid absolute URL/],
  ];

  it.each(corpus)('refuses %s', async (url, reason) => {
    const result = await fetchWith(guarded, url);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Refused to fetch /);
    expect(result.content).toMatch(reason);
  });

  it('refuses the live test server on 127.0.0.1 without the test-only allowlist', async () => {
    const result = await fetchWith(guarded, `http://127.0.0.1:${port}/page.html`);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/loopback/);
  });

  it('cannot be opened up through builtinTools configuration', async () => {
    const smuggled = { unsafeTestOnlyAllowedDestinations: [`127.0.0.1:${port}`] };
    const tools = builtinTools({ webFetch: smuggled as never });
    const tool = tools.find((candidate) => candidate.name === 'web_fetch');
    expect(tool).toBeDefined();
    const result = await fetchWith(tool as AnyTool, `http://127.0.0.1:${port}/page.html`);
    expect(result.content).toMatch(/^Refused to fetch .*loopback/);
  });
});

describe('web_fetch against a test server reached through an exact test-only allowlist', () => {
  const lookupCalls: string[] = [];
  const tool = (timeoutMs = 20_000) =>
    webFetchTool({
      lookup: fakeLookup({ 'example.test': ['127.0.0.1'] }, lookupCalls),
      unsafeTestOnlyAllowedDestinations: [`127.0.0.1:${port}`],
      maxBytes: 64 * 1024,
      timeoutMs,
    }) as AnyTool;
  const at = (route: string) => `http://example.test:${port}${route}`;

  it('turns HTML into readable text with links as [url], without scripts, styles, nav or images', async () => {
    const result = await fetchWith(tool(), at('/page.html'));
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`URL: ${at('/page.html')}\nStatus: 200 OK\nContent-Type: text/html\n\n`);
    expect(result.content).toContain('Welcome');
    expect(result.content).toContain(`Read the intro [${at('/docs/intro')}] first.`);
    expect(result.content).toContain(' * one\n * two');
    expect(result.content).not.toMatch(/do-not-show|color: red|Menu item|logo/);
  });

  it('returns JSON as it is', async () => {
    const result = await fetchWith(tool(), at('/data.json'));
    expect(result.content).toMatch(/Content-Type: application\/json\n\n\{"ok":true,"items":\[1,2\]\}$/);
  });

  it('decompresses gzip bodies', async () => {
    expect((await fetchWith(tool(), at('/gzip.html'))).content).toMatch(/\n\nsqueezed$/);
  });

  it('stops reading at the size cap and says so', async () => {
    const result = await fetchWith(tool(), at('/big.txt'), { max_chars: 100_000 });
    expect(result.content).toContain(`${'y'.repeat(64 * 1024)}\n[the response was larger than 64 KB and was cut there]`);
    expect(result.content).not.toContain('y'.repeat(64 * 1024 + 1));
  });

  it('cuts the text at max_chars and says how to see more', async () => {
    const result = await fetchWith(tool(), at('/big.txt'), { max_chars: 1000 });
    expect(result.content).toMatch(/\[text cut at 1000 of 65536 characters; call again with a larger max_chars/);
  });

  it('refuses non-text content', async () => {
    const result = await fetchWith(tool(), at('/image.png'));
    expect(result).toEqual({
      content: `Refused to return ${at('/image.png')}: its content type is image/png, not text. web_fetch only returns HTML, JSON and text.`,
      isError: true,
    });
  });

  it('marks HTTP errors as errors but still shows the body', async () => {
    const result = await fetchWith(tool(), at('/missing'));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Status: 404 Not Found[\s\S]*no such page/);
  });

  it('follows a redirect to an allowed page, checking the new hop', async () => {
    const result = await fetchWith(tool(), at('/redirect-ok'));
    expect(result.content).toContain(`URL: ${at('/page.html')}\nStatus: 200 OK`);
  });

  it('refuses a redirect from an allowed server to http://127.0.0.1/', async () => {
    const result = await fetchWith(tool(), at('/redirect-local'));
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      `Refused to fetch ${at('/redirect-local')}: it redirected to http://127.0.0.1/, and 127.0.0.1 is a loopback address (this machine)`,
    );
  });

  it('refuses a redirect to the cloud metadata address', async () => {
    expect((await fetchWith(tool(), at('/redirect-metadata'))).content).toMatch(/redirected to http:\/\/169\.254\.169\.254\/.*link-local/);
  });

  it('gives up after 5 redirects', async () => {
    expect((await fetchWith(tool(), at('/loop'))).content).toMatch(/redirected more than 5 times/);
  });

  it('connects to the address it checked, resolving each name once (no rebinding window)', async () => {
    lookupCalls.length = 0;
    // example.test exists only in the fake table: success proves the socket used the pinned answer.
    const result = await fetchWith(tool(), at('/data.json'));
    expect(result.isError).toBe(false);
    expect(lookupCalls).toEqual(['example.test']);
  });

  it('gives up when the server does not answer in time', async () => {
    expect((await fetchWith(tool(500), at('/slow'))).content).toBe(`Fetching ${at('/slow')} timed out after 0.5 s.`);
  });

  it('stops when the run is cancelled', async () => {
    const controller = new AbortController();
    const pending = runTool(tool(), { url: at('/slow') }, makeContext('/nonexistent-workspace', controller.signal));
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toEqual({ content: `Fetching ${at('/slow')} was cancelled.`, isError: true });
  });

  it('gives up when name resolution hangs past the deadline', async () => {
    const hanging = webFetchTool({ lookup: () => new Promise(() => {}), timeoutMs: 200 }) as AnyTool;
    expect((await fetchWith(hanging, 'http://slow-dns.test/')).content).toBe('Fetching http://slow-dns.test/ timed out after 0.2 s.');
  });

  it('still refuses other ports on the allowlisted address', async () => {
    const result = await fetchWith(tool(), `http://127.0.0.1:${port === 1 ? 2 : port - 1}/`);
    expect(result.content).toMatch(/^Refused to fetch .*loopback/);
  });
});
