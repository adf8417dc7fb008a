/**
 * `hob doctor` for the web chat: the page's files are installed, the address is free (or
 * already hob's), the page is not reachable in clear beyond this machine, and there is an owner.
 */
import { createServer } from 'node:net';
import type { Check } from '../../src/core/check.js';
import { errorMessage } from '../../src/core/errors.js';
import { NOT_SIGNED_IN } from './api-context.js';
import { isLoopback, siteOf, type WebConfig } from './config.js';
import { loadPage } from './http-server.js';

export async function checkWeb(config: WebConfig, fetchImpl: typeof fetch = fetch): Promise<Check[]> {
  const site = siteOf(config, config.port);
  const checks: Check[] = [];
  try {
    loadPage();
    checks.push({ name: 'web page', ok: true, detail: 'the page files are installed' });
  } catch (error) {
    checks.push({ name: 'web page', ok: false, detail: `${errorMessage(error)}; reinstall hob` });
  }
  checks.push(await checkAddress(config, site.baseUrl, fetchImpl));
  if (site.secure) {
    checks.push({ name: 'web security', ok: true, detail: `reached through ${config.public_url}: cookies are Secure` });
  } else if (isLoopback(config.host) && !config.public_url) {
    checks.push({ name: 'web security', ok: true, detail: `only this machine can open it (host ${config.host}); to use it from elsewhere, put a TLS proxy in front and set public_url: https://…` });
  } else {
    checks.push({ name: 'web security', ok: false, detail: `people reach it as ${site.baseUrl}: sign-in links and session cookies cross the network unencrypted; put a TLS proxy (Caddy, nginx) in front and set channels.web.public_url to its https address` });
  }
  const owner = config.allow_from[0];
  checks.push(
    owner === undefined
      ? { name: 'web owner', ok: false, detail: 'channels.web.allow_from is empty: put your own web id first (e.g. ["ann"]), then `hob web link` signs you in' }
      : { name: 'web owner', ok: true, detail: `${owner}; \`hob web link\` prints their sign-in link` },
  );
  return checks;
}

/** Free to bind, or hob's web chat already answering there (a running `hob start`). */
async function checkAddress(config: WebConfig, baseUrl: string, fetchImpl: typeof fetch): Promise<Check> {
  const where = `${config.host}:${config.port}`;
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen(config.port, config.host, () => probe.close(() => resolve(undefined)));
  });
  if (!problem) return { name: 'web address', ok: true, detail: `${where} is free; hob start serves the chat at ${baseUrl}` };
  if (problem.code !== 'EADDRINUSE') return { name: 'web address', ok: false, detail: `cannot listen on ${where}: ${problem.message}; check channels.web.host and port` };
  try {
    const response = await fetchImpl(`http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}/api/me`, { signal: AbortSignal.timeout(5000) });
    const body = (await response.json().catch(() => ({}))) as { error?: string };
    // Signed out, or (asked by a bare address) refused for its Host: either way hob's words.
    const hob = (response.status === 401 && body.error === NOT_SIGNED_IN) || (response.status === 403 && body.error?.startsWith('Refused: unknown host'));
    if (hob) return { name: 'web address', ok: true, detail: `hob is already serving the chat at ${baseUrl}` };
  } catch {
    // Not hob: say so below.
  }
  return { name: 'web address', ok: false, detail: `${where} is taken by another program; set channels.web.port to a free port` };
}
