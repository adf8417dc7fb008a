import http from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leanBodyFetch, leanFetch } from '../../src/core/lean-fetch.js';

/**
 * The fetch model requests and a channel's REST calls go through (src/core/lean-fetch.ts):
 * what a server receives and what the caller reads back must be what Node's fetch gives.
 * Two plain local servers stand in for an API that moved, on two origins.
 */
type Seen = { method: string; url: string; body: string; headers: http.IncomingHttpHeaders };

function echoServer(seen: Seen[], routes: (url: string) => { status: number; headers?: Record<string, string> } | undefined): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      const route = routes(req.url ?? '');
      if (route) {
        res.writeHead(route.status, route.headers);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'r1' });
      res.end(JSON.stringify({ body }));
    });
  });
}

const listen = async (server: http.Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};

const seen: Seen[] = [];
let origin = '';
let other = '';
let main: http.Server;
let moved: http.Server;
beforeAll(async () => {
  moved = echoServer(seen, () => undefined);
  other = await listen(moved);
  main = echoServer(seen, (url) => {
    if (url === '/v1/moved') return { status: 307, headers: { location: '/v1/here' } };
    if (url === '/v1/gone') return { status: 302, headers: { location: '/v1/here' } };
    if (url === '/v1/elsewhere') return { status: 308, headers: { location: `${other}/v1/there` } };
    if (url === '/v1/nothing') return { status: 204 };
    return undefined;
  });
  origin = await listen(main);
});
afterAll(async () => {
  await new Promise((resolve) => main.close(resolve));
  await new Promise((resolve) => moved.close(resolve));
});

const TEXT = 'Grüße — 你好 👋🏽';
const fetchIt = leanFetch();

describe('lean fetch', () => {
  it('sends the text as it was written, with its length, and reads the answer and its headers back', async () => {
    seen.length = 0;
    const response = await fetchIt(`${origin}/v1/here`, { method: 'POST', body: TEXT, headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(await response.json()).toEqual({ body: TEXT });
    expect(seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength(TEXT)));
    expect(seen[0]?.headers['content-type']).toBe('application/json');
  });

  it('follows an endpoint that moved (307) with the same method and body', async () => {
    seen.length = 0;
    const response = await fetchIt(`${origin}/v1/moved`, { method: 'POST', body: TEXT });
    expect(await response.json()).toEqual({ body: TEXT });
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual(['POST /v1/moved', 'POST /v1/here']);
  });

  it('goes on as a GET without the body after a 302, as fetch does', async () => {
    seen.length = 0;
    await (await fetchIt(`${origin}/v1/gone`, { method: 'POST', body: TEXT })).text();
    expect(seen[1]).toMatchObject({ method: 'GET', url: '/v1/here', body: '' });
  });

  it('refuses a redirect when asked to, as fetch does, without following it', async () => {
    seen.length = 0;
    const refused = await fetchIt(`${origin}/v1/moved`, { method: 'POST', body: TEXT, redirect: 'error' }).catch((error: unknown) => error);
    const byFetch = await fetch(`${origin}/v1/moved`, { method: 'POST', body: TEXT, redirect: 'error' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toBe((byFetch as TypeError).message);
    expect(seen.map((request) => request.url)).toEqual(['/v1/moved', '/v1/moved']);
  });

  it('sends a streamed body as it comes, chunked, as grammy hands over a file upload', async () => {
    seen.length = 0;
    const parts = ['--b\r\n', TEXT, '\r\n--b--\r\n'];
    const response = await fetchIt(`${origin}/v1/here`, { method: 'POST', body: Readable.from(parts.map((part) => Buffer.from(part))) as unknown as RequestInit['body'] });
    expect(await response.json()).toEqual({ body: parts.join('') });
    expect(seen[0]?.headers['transfer-encoding']).toBe('chunked');
    async function* iterable() {
      for (const part of parts) yield Buffer.from(part);
    }
    await (await fetchIt(`${origin}/v1/here`, { method: 'POST', body: iterable() as unknown as RequestInit['body'] })).text();
    expect(seen[1]?.body).toBe(parts.join(''));
  });

  it('refuses to send a streamed body again after a 307, where fetch refuses it too', async () => {
    seen.length = 0;
    const refused = await fetchIt(`${origin}/v1/moved`, { method: 'POST', body: Readable.from([Buffer.from(TEXT)]) as unknown as RequestInit['body'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect(String((refused as TypeError).cause)).toMatch(/moved \(307\), and a streamed body cannot be sent again/);
    expect(seen.map((request) => request.url)).toEqual(['/v1/moved']);
  });

  it('does not carry the credentials to another origin', async () => {
    seen.length = 0;
    await (await fetchIt(`${origin}/v1/elsewhere`, { method: 'POST', body: TEXT, headers: { authorization: 'Bearer secret' } })).text();
    expect(seen[0]?.headers.authorization).toBe('Bearer secret');
    expect(seen[1]).toMatchObject({ method: 'POST', url: '/v1/there', body: TEXT });
    expect(seen[1]?.headers.authorization).toBeUndefined();
  });

  it('gives a response without a body for 204', async () => {
    const response = await fetchIt(`${origin}/v1/nothing`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('rejects with the signal’s reason when the caller has already given up', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped by the person'));
    await expect(fetchIt(`${origin}/v1/here`, { method: 'POST', body: TEXT, signal: controller.signal })).rejects.toThrow('stopped by the person');
  });
});

describe('lean fetch for a client that reads the status, headers and whole body (grammy, Discord, Slack)', () => {
  const bodyFetch = leanBodyFetch();

  it('reads the answer as JSON, with the status and headers fetch would give', async () => {
    seen.length = 0;
    const response = await bodyFetch(`${origin}/v1/here`, { method: 'POST', body: TEXT, headers: { 'Content-Type': 'application/json', Connection: 'keep-alive' } });
    const byFetch = await fetch(`${origin}/v1/here`, { method: 'POST', body: TEXT, headers: { 'Content-Type': 'application/json' } });
    expect([response.status, response.ok, response.statusText]).toEqual([byFetch.status, byFetch.ok, byFetch.statusText]);
    expect(response.headers.get('x-request-id')).toBe('r1');
    expect(await response.json()).toEqual(await byFetch.json());
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength(TEXT)));
  });

  it("gives the headers as Node's Headers gives them, and the address the answer came from", async () => {
    const headed = http.createServer((_req, res) => {
      res.setHeader('X-RateLimit-Remaining', '4');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('Vary', ['Accept', 'Origin']);
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    const headedOrigin = await listen(headed);
    try {
      const response = await bodyFetch(`${headedOrigin}/x`);
      const byFetch = await fetch(`${headedOrigin}/x`);
      const without = (entries: Iterable<[string, string]>) => [...entries].filter(([name]) => name !== 'date' && name !== 'connection' && name !== 'keep-alive');
      expect(without(response.headers.entries())).toEqual(without(byFetch.headers.entries()));
      expect(without(response.headers)).toEqual(without(byFetch.headers));
      for (const name of ['x-ratelimit-remaining', 'X-RATELIMIT-REMAINING', 'set-cookie', 'vary', 'absent']) {
        expect(response.headers.get(name), name).toBe(byFetch.headers.get(name));
        expect(response.headers.has(name), name).toBe(byFetch.headers.has(name));
      }
      expect(response.headers.getSetCookie()).toEqual(byFetch.headers.getSetCookie());
      expect(response.url).toBe(`${headedOrigin}/x`);
      expect((await bodyFetch(`${origin}/v1/moved`, { method: 'POST', body: '{}' })).url).toBe(`${origin}/v1/here`);
    } finally {
      headed.close();
    }
  });

  it('refuses to read a body twice, as a Response does', async () => {
    const response = await bodyFetch(`${origin}/v1/here`, { method: 'POST', body: '{}' });
    expect(await response.text()).toBe('{"body":"{}"}');
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('gives an empty body for 204 and follows a moved endpoint', async () => {
    expect(await (await bodyFetch(`${origin}/v1/nothing`, { method: 'POST', body: '{}' })).text()).toBe('');
    expect(await (await bodyFetch(`${origin}/v1/moved`, { method: 'POST', body: TEXT })).json()).toEqual({ body: TEXT });
  });

  it('ends a body being read with the signal’s reason', async () => {
    const controller = new AbortController();
    const slow = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
      controller.abort(new Error('stopped while reading'));
    });
    const slowOrigin = await listen(slow);
    try {
      const response = await bodyFetch(`${slowOrigin}/`, { signal: controller.signal }).catch((error: unknown) => error);
      const failure = response instanceof Error ? response : await (response as Response).json().catch((error: unknown) => error);
      expect(String(failure)).toMatch(/stopped while reading/);
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
