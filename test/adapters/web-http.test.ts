import '../support/env.js';
import { request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { NOT_SIGNED_IN } from '../../adapters/web/api-context.js';
import { USED_LINK } from '../../adapters/web/api-session.js';
import { webCli } from '../../adapters/web/commands.js';
import { webConfigSchema } from '../../adapters/web/config.js';
import { WebIdentities } from '../../adapters/web/identities.js';
import { createWebAdapter } from '../../adapters/web/web-adapter.js';
import { openWebDb } from '../../adapters/web/web-db.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { tempDir } from '../support/engine.js';
import { WebPageClient } from '../support/web-client.js';
import { freePort, webBed, type WebBed } from '../support/web-testbed.js';

/**
 * Sign-in, sessions and the checks every request passes, over real HTTP: what a browser (or
 * anything pretending to be one) gets from the web channel. A gateway runs behind it so that
 * "refused" can be told from "ignored": a refused message never reaches the model.
 */
let bed: WebBed | undefined;
let hob: TestGateway | undefined;
afterEach(async () => {
  await hob?.close();
  await bed?.close();
  hob = undefined;
  bed = undefined;
});

async function started(model = new ScriptedModel([{ text: 'Hello Ann.' }])) {
  bed = await webBed();
  hob = await startTestGateway(bed.adapter, model);
  return { bed, hob, model };
}

const cliLink = async (bed: WebBed, options: Record<string, string>) => {
  const lines: string[] = [];
  await webCli.subcommands.find((command) => command.name === 'link')?.run(options, { config: bed.config, dataDir: bed.dataDir, out: (line) => lines.push(line) });
  return lines.join('\n');
};

/** node:http, because fetch will not send a Host header of the caller's choosing. */
function rawRequest(url: string, options: { method?: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('web: signing in', () => {
  it('a link printed by `hob web link` signs in once; the same link again is refused in words', async () => {
    const { bed, model } = await started();
    const printed = await cliLink(bed, { as: OWNER.id, name: OWNER.name });
    expect(printed).toContain('Sign-in link for Ann (100), valid once, for 10 minutes');
    const url = /http:\/\/\S+/.exec(printed)?.[0] as string;
    expect(url.startsWith(`${bed.adapter.url}/#code=`)).toBe(true);

    const page = new WebPageClient(bed.adapter.url);
    const first = await page.signIn(url);
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toMatch(/^hob_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=2592000$/);
    await page.open();
    expect(page.me).toEqual({ id: OWNER.id, name: OWNER.name });
    await page.say('hi');
    await page.waitFor(() => page.botMessages().some((message) => message.text === 'Hello Ann.'), 'the answer');

    const again = await new WebPageClient(bed.adapter.url).signIn(url);
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: string }).error).toBe(USED_LINK);
    expect(model.requests).toHaveLength(1);
  });

  it('an expired code is refused, and nobody is signed in by it', async () => {
    const { bed } = await started();
    const db = openWebDb(bed.dataDir);
    const { code } = new WebIdentities(db).issueCode(OWNER.id, -1);
    db.close();
    const page = new WebPageClient(bed.adapter.url);
    const response = await page.signIn(`${bed.adapter.url}/#code=${code}`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe(USED_LINK);
    expect((await page.get('/api/me')).status).toBe(401);
  });

  it('refuses a link for someone not on the allow list who never signed in, naming the fix', async () => {
    const { bed } = await started();
    await expect(cliLink(bed, { as: 'mallory' })).rejects.toThrow('mallory is not on channels.web.allow_from and has never signed in here');
  });

  it('over https (behind a proxy) the cookie is Secure and __Host- prefixed, and only that origin is accepted', async () => {
    const dataDir = tempDir('hob-web-');
    const config = webConfigSchema.parse({ port: await freePort(), public_url: 'https://hob.example.com', allow_from: [OWNER.id] });
    const adapter = createWebAdapter({ config, dataDir, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    await adapter.start({ message: () => undefined, button: () => undefined });
    try {
      const db = openWebDb(dataDir);
      const { code } = new WebIdentities(db).issueCode(OWNER.id);
      db.close();
      // As the proxy forwards it: the public host, the public origin.
      const call = (origin: string) =>
        rawRequest(`http://127.0.0.1:${config.port}/api/signin`, { method: 'POST', headers: { Host: 'hob.example.com', Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
      expect((await call(`http://127.0.0.1:${config.port}`)).status).toBe(403);
      const response = await call('https://hob.example.com');
      expect(response.status).toBe(200);
      expect(response.headers['set-cookie']?.[0]).toMatch(/^__Host-hob_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    } finally {
      await adapter.stop();
    }
  });
});

describe('web: sessions', () => {
  it('a forged cookie and a signed-out cookie are refused everywhere; the page is told to sign in again', async () => {
    const { bed, model } = await started();
    const page = await bed.page(OWNER);
    const forged = new WebPageClient(bed.adapter.url);
    forged.cookie = `hob_session=${'A'.repeat(43)}`;
    for (const response of [await forged.get('/api/me'), await forged.get('/api/events'), await forged.say('let me in')]) {
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: string }).error).toBe(NOT_SIGNED_IN);
      expect(response.headers.get('set-cookie')).toContain('Max-Age=0');
    }
    const stale = page.cookie;
    expect((await page.post('/api/signout', {})).status).toBe(204);
    await page.waitFor(() => page.signedOut, 'the open page to be signed out');
    const replay = new WebPageClient(bed.adapter.url);
    replay.cookie = stale;
    expect((await replay.say('still me?')).status).toBe(401);
    expect(model.requests).toHaveLength(0);
  });

  it('a session survives a restart, and `hob web signout` ends it and the open page', async () => {
    const { bed, hob: first } = await started(new ScriptedModel([{ text: 'Still here.' }]));
    const before = await bed.page(OWNER);
    await first.close();
    const restarted = bed.restart();
    hob = await startTestGateway(restarted, first.deps.provider, { dir: first.dir });
    const after = new WebPageClient(restarted.url, bed.waiters);
    after.cookie = before.cookie;
    await after.open();
    await after.say('are you there?');
    await after.waitFor(() => after.botMessages().some((message) => message.text === 'Still here.'), 'the answer after the restart');

    const lines: string[] = [];
    await webCli.subcommands.find((command) => command.name === 'signout')?.run({ as: OWNER.id }, { config: bed.config, dataDir: bed.dataDir, out: (line) => lines.push(line) });
    expect(lines).toEqual(['Signed 100 out of 1 web session(s); open pages are signed out within seconds.']);
    await after.waitFor(() => after.signedOut, 'the open page to be signed out');
    expect((await after.get('/api/me')).status).toBe(401);
  });
});

describe('web: requests from elsewhere', () => {
  it('refuses a message from another origin, one with no Origin, and one that is not JSON; none reaches hob', async () => {
    const { bed, model } = await started();
    const page = await bed.page(OWNER);
    const elsewhere = `http://127.0.0.1:${(await freePort())}`;
    const noOrigin = await fetch(`${bed.adapter.url}/api/messages`, { method: 'POST', headers: { Cookie: page.cookie as string, 'Content-Type': 'application/json' }, body: '{"text":"x"}' });
    const foreign = await page.post('/api/messages', { text: 'transfer everything' }, { Origin: elsewhere });
    const sameSite = await page.post('/api/messages', { text: 'transfer everything' }, { 'Sec-Fetch-Site': 'same-site' });
    const form = await fetch(`${bed.adapter.url}/api/messages`, { method: 'POST', headers: { Cookie: page.cookie as string, Origin: bed.adapter.url, 'Content-Type': 'text/plain' }, body: '{"text":"x"}' });
    expect([noOrigin.status, foreign.status, sameSite.status, form.status]).toEqual([403, 403, 403, 415]);
    expect(((await foreign.json()) as { error: string }).error).toBe(`Refused: requests from ${elsewhere} are not accepted.`);
    const stream = await page.get('/api/events', { Origin: elsewhere });
    expect(stream.status).toBe(403);
    expect(model.requests).toHaveLength(0);
    expect(page.messages).toEqual([]);
  });

  it('answers no request that names another host (DNS rebinding), not even the page', async () => {
    const { bed } = await started();
    const response = await rawRequest(`${bed.adapter.url}/`, { headers: { Host: 'attacker.example' } });
    expect(response.status).toBe(403);
    expect(response.body).toBe('{"error":"Refused: unknown host \\"attacker.example\\"."}');
    const page = await fetch(`${bed.adapter.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
  });

  it('the in-memory channel and the web serve one gateway side by side', async () => {
    // The web adapter is one more adapter: another channel keeps working beside it.
    bed = await webBed();
    const memory = new MemoryChannel();
    const model = new ScriptedModel([{ text: 'Hello Ann on the web.' }, { text: 'Hello Ann in memory.' }]);
    hob = await startTestGateway(bed.adapter, model, {
      adapters: [bed.adapter, memory],
      access: new Map([
        ['web', { allowFrom: [OWNER.id], allowedGroups: [] }],
        ['memory', { allowFrom: [OWNER.id], allowedGroups: [] }],
      ]),
    });
    const page = await bed.page(OWNER);
    await page.say('hi');
    await page.waitFor(() => page.botMessages().some((message) => message.text === 'Hello Ann on the web.'), 'the web answer');
    memory.say(OWNER, 'hi');
    await memory.waitFor(() => memory.chat(`dm-${OWNER.id}`).some((message) => message.text === 'Hello Ann in memory.'));
  });
});
