import { execFile } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleOptions } from '../../scripts/build.mjs';
import { startFakeSlack, type FakeSlack } from '../fakes/slack/index.js';
import { tempDir } from '../support/temp-dirs.js';

/**
 * dist/ loads some parts of the channel libraries only on their first use (scripts/
 * bundle-plugins.mjs: Bolt's Express receiver and raw-body, OAuth's jsonwebtoken, discord.js's
 * undici and magic-bytes.js, grammy's node-fetch, the event emitter's inspect, all of undici 7
 * but what Socket Mode takes, discord.js's builders). Bundled as
 * dist/ is, each must still do its work when it is used: a Discord file fetched by URL or
 * uploaded without a type, a Slack request's body in HTTP mode, an OAuth state, grammy's own
 * fetch and a Telegram photo given by URL, the words of an unhandled error, Socket Mode's
 * connection (undici's WebSocket, taken without the rest of undici), a row of buttons built by
 * discord.js and an embed's length (@discordjs/builders). And a library that changed so that a part would load at start again is
 * said at build time.
 */
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

let server: http.Server;
let slack: FakeSlack;
let origin = '';
const uploads: { contentType: string; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/cat.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(PNG);
        return;
      }
      if (req.url === '/botprobe/getMe') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true,"result":{"id":1,"is_bot":true,"first_name":"Probe","username":"probe_bot"}}');
        return;
      }
      if (req.url === '/botprobe/sendPhoto') {
        uploads.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('latin1') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true,"result":{"message_id":5,"date":0,"chat":{"id":1,"type":"private"}}}');
        return;
      }
      if (req.url?.endsWith('/upload')) {
        uploads.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('latin1') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"1"}');
        return;
      }
      res.end('plain text');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  slack = await startFakeSlack();
});
afterAll(async () => {
  await slack.close();
  await new Promise((resolve) => server.close(resolve));
});

describe('library parts loaded on first use, in the bundle', () => {
  it('still work when used', async () => {
    const out = tempDir('hob-library-probe-');
    const result = await build({ ...bundleOptions({ probe: 'test/build/library-probe.ts' }, out), sourcemap: false });
    expect(result.warnings.map((warning) => warning.text)).toEqual([]);
    const { stdout } = await promisify(execFile)(process.execPath, [join(out, 'probe.js'), origin, slack.apiUrl, slack.appToken], { cwd: process.cwd() }).catch((error: { stderr: string }) => {
      throw new Error(`the probe failed: ${error.stderr}`);
    });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    expect(seen.unhandled).toBe("Unhandled 'error' event emitted, received { code: 7 }");
    expect(seen.express).toBe(true);
    expect(seen.body).toBe('token=x&text=hi');
    expect(seen.stateBack).toEqual({ scopes: ['chat:write'] });
    expect(seen.file).toEqual({ bytes: PNG.length, contentType: 'image/png' });
    expect(seen.posted).toEqual({ id: '1' });
    expect(seen.uploaded).toEqual({ id: '1' });
    expect(seen.me).toBe('probe_bot');
    expect(seen.photo).toBe(5);
    expect(seen.socketConnected).toBe(true);
    expect(seen.row).toEqual({ type: 1, components: [{ type: 2, style: 1, custom_id: 'go', label: 'Go' }] });
    expect(seen.embedLength).toBe('Hithere'.length);
    // The upload had no type of its own: magic-bytes.js read it from the bytes.
    expect(uploads.map((upload) => upload.contentType.split(';')[0])).toEqual(['application/json', 'multipart/form-data', 'multipart/form-data']);
    expect(uploads[0]?.body).toBe('{"text":"hi"}');
    expect(uploads[1]?.body).toMatch(/filename="cat"\r\nContent-Type: image\/png/);
    // The photo grammy fetched by URL went up whole.
    expect(uploads[2]?.body).toContain(PNG.toString('latin1'));
  });
});
