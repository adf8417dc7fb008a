/**
 * Bundled by library-parts.test.ts as dist/ is bundled (scripts/build.mjs): uses each part of
 * a channel library that the bundle loads only on first use, against the local server whose
 * address it is given, and prints what each gave back as one JSON line.
 */
import http from 'node:http';
import { ExpressReceiver, HTTPModuleFunctions } from '@slack/bolt';
import { ClearStateStore } from '@slack/oauth';
import { LogLevel, SocketModeClient } from '@slack/socket-mode';
// Each through discord.js, which require()s them as hob's bundle has them (an import would
// take their ES module builds instead).
import { ActionRowBuilder, Embed, MessagePayload, REST } from 'discord.js';

const origin = process.argv[2] as string;
/** The fake Slack's Web API and its app token, for Socket Mode. */
const [slackApiUrl, appToken] = [process.argv[3] as string, process.argv[4] as string];
// A failure in one line, without the bundle's source around it.
process.on('uncaughtException', (error) => {
  const cause = (error as { error?: unknown }).error ?? error.cause;
  process.stderr.write(`${error.name}: ${error.message}${cause ? ` (${String(cause)})` : ""}\n`);
  process.exit(1);
});
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

const unhandled = (() => {
  try {
    // discord.js's REST client is its event emitter (@vladfrangu/async_event_emitter).
    (new REST().emit as (event: string, value: unknown) => boolean)('error', { code: 7 });
    return 'nothing thrown';
  } catch (error) {
    return (error as Error).message;
  }
})();

const express = new ExpressReceiver({ signingSecret: 'probe' }).router !== undefined;

const body = await new Promise<string>((resolve, reject) => {
  const server = http.createServer(async (req, res) => {
    const buffered = await HTTPModuleFunctions.bufferIncomingMessage(req);
    res.end();
    server.close();
    resolve(buffered.rawBody.toString('utf8'));
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    http.request({ port, host: '127.0.0.1', method: 'POST' }, (res) => res.resume()).on('error', reject).end('token=x&text=hi');
  });
});

const states = new ClearStateStore('probe secret');
const state = await states.generateStateParam({ scopes: ['chat:write'] }, new Date());
const stateBack = await states.verifyStateParam(new Date(), state);

const file = await MessagePayload.resolveFile(`${origin}/cat.png`);

// discord.js's builders (its index's getters, Components.js's builder for a component) and an
// embed's length, each reaching @discordjs/builders on first use.
const row = ActionRowBuilder.from({ type: 1, components: [{ type: 2, style: 1, custom_id: 'go', label: 'Go' }] }).toJSON();
// Embed's constructor is private to discord.js's typings: it makes one of each message's embeds.
const embedLength = new (Embed as unknown as new (data: object) => { length: number })({ title: 'Hi', description: 'there' }).length;

// Its own default request (undici 6) for JSON; a file as hob sends it (its request hands form
// data to Node's fetch: undici 6 cannot send Node's FormData).
const posted = await new REST({ api: origin, retries: 0 }).setToken('probe').post('/upload', { body: { text: 'hi' } });
const uploaded = await new REST({ api: origin, retries: 0, makeRequest: (url, init) => fetch(url, init as RequestInit) }).setToken('probe').post('/upload', { files: [{ name: 'cat', data: PNG }] });

// Socket Mode's WebSocket, its events and its Agent, each taken from its own file of undici:
// connected once Slack's hello came in, and closed again.
const socketMode = new SocketModeClient({ appToken, clientOptions: { slackApiUrl }, logLevel: LogLevel.ERROR, autoReconnectEnabled: false });
let socketConnected = false;
socketMode.on('connected', () => (socketConnected = true));
await socketMode.start();
await socketMode.disconnect();

// In a chunk of its own, as hob's Telegram adapter is (in one scope with the rest, esbuild
// renames the AbortSignal class of grammy's shim, which node-fetch then refuses).
const { me, photo } = await (await import('./library-probe-telegram.js')).telegramProbe(origin);

process.stdout.write(
  `${JSON.stringify({
    unhandled,
    express,
    body,
    stateBack,
    file: { bytes: (file.data as Buffer).length, contentType: file.contentType },
    posted,
    uploaded,
    me,
    photo,
    socketConnected,
    row,
    embedLength,
  })}\n`,
);
