import '../support/env.js';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { siteOf } from '../../adapters/web/config.js';
import { webChannel } from '../../adapters/web/index.js';
import { renderHtml } from '../../adapters/web/render.js';
import { problemsFromIssues } from '../../src/config/errors.js';
import { formatPath } from '../../src/config/interpolate.js';
import { tempDir } from '../support/engine.js';
import { freePort } from '../support/web-testbed.js';

/** What `hob` will say about a `channels.web` section: one line per problem, as the config loader prints them. */
function problems(section: unknown): string[] {
  const result = webChannel.configSchema.safeParse(section);
  if (result.success) return [];
  return problemsFromIssues(result.error.issues, webChannel.configSchema, section).map((problem) => `channels.web.${formatPath(problem.path)}: ${problem.message}`);
}

describe('channels.web config', () => {
  it('an empty section serves this machine only, on port 8377', () => {
    expect(webChannel.configSchema.parse({})).toEqual({ port: 8377, host: '127.0.0.1', allow_from: [], session_days: 30 });
    expect(webChannel.access(webChannel.configSchema.parse({ allow_from: ['ann', 42] }))).toEqual({ allowFrom: ['ann', '42'], allowedGroups: [] });
  });

  it('names each wrong key and how to fix it', () => {
    expect(problems({ public_ulr: 'https://hob.example.com' })).toEqual(['channels.web.public_ulr: unknown key; did you mean "public_url"?']);
    expect(problems({ port: 70000, allow_from: ['ann smith'], session_days: 0 })).toEqual([
      'channels.web.port: expected a port number from 1 to 65535, got 70000',
      'channels.web.allow_from[0]: expected a web user id: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "ann"), got "ann smith"',
      'channels.web.session_days: expected a whole number of days from 1 to 365, got 0',
    ]);
    expect(problems({ public_url: 'https://example.com/hob' })).toEqual([
      'channels.web.public_url: expected the page\'s origin only, like "https://hob.example.com" (the page is served at the root; no path), got "https://example.com/hob"',
    ]);
  });

  it('refuses to serve beyond this machine without saying how people reach the page', () => {
    expect(problems({ host: '0.0.0.0' })).toEqual([
      'channels.web.public_url: missing: host 0.0.0.0 serves the page beyond this machine, so say how people reach it (behind a TLS proxy: public_url: "https://hob.example.com"), or keep host: 127.0.0.1',
    ]);
    expect(problems({ host: '0.0.0.0', public_url: 'https://hob.example.com' })).toEqual([]);
  });

  it('accepts the loopback names on this machine, and only the public origin behind a proxy', () => {
    const local = siteOf(webChannel.configSchema.parse({}), 8377);
    expect([...local.origins]).toEqual(['http://127.0.0.1:8377', 'http://localhost:8377', 'http://[::1]:8377']);
    expect(local.secure).toBe(false);
    const proxied = siteOf(webChannel.configSchema.parse({ public_url: 'https://hob.example.com/' }), 8377);
    expect(proxied.baseUrl).toBe('https://hob.example.com');
    expect([...proxied.origins]).toEqual(['https://hob.example.com']);
    expect([...proxied.hosts]).toEqual(['hob.example.com', '127.0.0.1:8377', 'localhost:8377', '[::1]:8377']);
    expect(proxied.secure).toBe(true);
  });
});

/** What `hob doctor` hands a channel's checks. */
const doctorContext = { fetch, mask: (secret: string) => `${secret.slice(0, 3)}…` };

describe('web doctor', () => {
  it('says the address is free, the page is local only, and who the owner is', async () => {
    const config = webChannel.configSchema.parse({ port: await freePort(), allow_from: ['ann'] });
    expect(await webChannel.doctor(config, doctorContext)).toEqual([
      { name: 'web page', ok: true, detail: 'the page files are installed' },
      { name: 'web address', ok: true, detail: `127.0.0.1:${config.port} is free; hob start serves the chat at http://127.0.0.1:${config.port}` },
      { name: 'web security', ok: true, detail: 'only this machine can open it (host 127.0.0.1); to use it from elsewhere, put a TLS proxy in front and set public_url: https://…' },
      { name: 'web owner', ok: true, detail: 'ann; `hob web link` prints their sign-in link' },
    ]);
  });

  it('knows a running hob on the port from another program there', async () => {
    const config = webChannel.configSchema.parse({ port: await freePort(), allow_from: ['ann'] });
    const adapter = await webChannel.create(config, { logger: { info: () => undefined, warn: () => undefined, error: () => undefined }, dataDir: tempDir('hob-web-'), notice: () => undefined });
    await adapter.start({ message: () => undefined, button: () => undefined });
    try {
      expect((await webChannel.doctor(config, doctorContext)).find((check) => check.name === 'web address')).toEqual({ name: 'web address', ok: true, detail: `hob is already serving the chat at http://127.0.0.1:${config.port}` });
    } finally {
      await adapter.stop();
    }
    const other = createServer((_req, res) => res.end('hello'));
    await new Promise<void>((resolve) => other.listen(config.port, '127.0.0.1', resolve));
    try {
      expect((await webChannel.doctor(config, doctorContext)).find((check) => check.name === 'web address')).toEqual({
        name: 'web address',
        ok: false,
        detail: `127.0.0.1:${config.port} is taken by another program; set channels.web.port to a free port`,
      });
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('fails a page reached in clear over the network, and a config with no owner', async () => {
    const config = webChannel.configSchema.parse({ host: '0.0.0.0', port: await freePort(), public_url: 'http://192.168.1.5:8377' });
    const checks = await webChannel.doctor(config, doctorContext);
    expect(checks.filter((check) => !check.ok).map((check) => check.name)).toEqual(['web security', 'web owner']);
    expect(checks.find((check) => check.name === 'web security')?.detail).toContain('sign-in links and session cookies cross the network unencrypted');
  });
});

describe('web rendering', () => {
  it('escapes what could break out of text or an attribute, and keeps only web links', () => {
    expect(renderHtml('[x](https://a.example/"onmouseover="alert(1)) and [y](javascript:alert(1))', false)).toBe(
      '<a href="https://a.example/&quot;onmouseover=&quot;alert(1)" target="_blank" rel="noopener noreferrer nofollow">x</a> and y',
    );
    expect(renderHtml('<b>"quoted" & \'single\'</b>', true)).toBe('&lt;b&gt;&quot;quoted&quot; &amp; &#39;single&#39;&lt;/b&gt;');
  });
});
