/**
 * The web channel's HTTP front: the static page (read once from adapters/web/page, no build
 * step) and the API, behind the Host/Origin checks, with the security headers on every answer.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../../src/core/errors.js';
import { openEvents, postMessage, press, upload, download } from './api-chat.js';
import type { WebApiContext } from './api-context.js';
import { askForAccess, me, signIn, signOut } from './api-session.js';
import { clearedCookie, HttpError, refusalOf, SECURITY_HEADERS, sendJson } from './http-guard.js';

const PAGE_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/view.js': { file: 'view.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

export type PageAssets = Map<string, { body: Buffer; type: string }>;

/** The page's files, wherever hob runs from: adapters/web/page beside this file, or beside dist/ in a build. */
export function loadPage(): PageAssets {
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = [join(here, 'page'), join(here, '..', 'adapters', 'web', 'page')].find((candidate) => existsSync(join(candidate, 'index.html')));
  if (!dir) throw new Error(`the web chat's page (adapters/web/page) is missing from this install (looked beside ${here})`);
  const assets: PageAssets = new Map();
  for (const [path, { file, type }] of Object.entries(PAGE_FILES)) assets.set(path, { body: readFileSync(join(dir, file)), type });
  return assets;
}

/** Answers one request. Never throws: failures are logged and answered in words. */
export async function handleRequest(req: IncomingMessage, res: ServerResponse, context: WebApiContext, page: PageAssets): Promise<void> {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const path = new URL(req.url ?? '/', 'http://page').pathname;
  const api = path.startsWith('/api/');
  const refusal = refusalOf(req, context.site, api);
  if (refusal !== undefined) {
    context.logger.warn({ method: req.method, path, reason: refusal }, 'web request refused');
    return sendJson(res, 403, { error: `Refused: ${refusal}.` });
  }
  try {
    if (api) await routeApi(req, res, path, context);
    else servePage(req, res, path, page);
  } catch (error) {
    if (error instanceof HttpError) {
      if (res.headersSent) return void res.end();
      return sendJson(res, error.status, { error: error.message }, error.status === 401 ? { 'Set-Cookie': clearedCookie(context.site) } : {});
    }
    context.logger.error({ method: req.method, path, err: errorMessage(error) }, 'web request failed');
    if (!res.headersSent) sendJson(res, 500, { error: "Something went wrong on hob's side (it is in hob's log); please try again." });
    else res.end();
  }
}

async function routeApi(req: IncomingMessage, res: ServerResponse, path: string, context: WebApiContext): Promise<void> {
  const route = `${req.method} ${path}`;
  switch (route) {
    case 'POST /api/signin':
      return signIn(req, res, context);
    case 'POST /api/access':
      return askForAccess(req, res, context);
    case 'POST /api/signout':
      return signOut(req, res, context);
    case 'GET /api/me':
      return me(req, res, context);
    case 'GET /api/events':
      return openEvents(req, res, context);
    case 'POST /api/messages':
      return postMessage(req, res, context);
    case 'POST /api/uploads':
      return upload(req, res, context);
    case 'POST /api/press':
      return press(req, res, context);
  }
  const file = /^\/api\/files\/([^/]+)$/.exec(path);
  if (file && req.method === 'GET') return download(req, res, context, file[1] as string);
  throw new HttpError(404, `No such call: ${route}.`);
}

function servePage(req: IncomingMessage, res: ServerResponse, path: string, page: PageAssets): void {
  const asset = page.get(path);
  if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    return void res.end('Not found.');
  }
  res.writeHead(200, { 'Content-Type': asset.type, 'Content-Length': String(asset.body.length), 'Cache-Control': 'no-cache' });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}
