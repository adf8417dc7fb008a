import type http from 'node:http';
import { parseRequestBody } from '../telegram/request-body.js';
import { takeHold, type Hold, type MessageBuckets, type NonceMemory } from './limits.js';
import {
  APP_ID, messageObject, pingsOf, snowflake, userObject,
  type Channel, type FakePerson, type Interaction, type Json, type Notice, type RestCall, type StoredMessage,
} from './world.js';

/** What the REST routes read and change: the fake's state. */
export interface RestHost {
  readonly token: string;
  readonly calls: RestCall[];
  /** Told of every call as it arrives. */
  readonly onCall: ((call: RestCall) => void) | undefined;
  readonly notices: Notice[];
  readonly commands: Map<string, Json[]>;
  readonly messages: StoredMessage[];
  readonly applicationFlags: number;
  readonly gatewayUrl: string;
  readonly recommendedShards: number;
  readonly origin: string;
  readonly hob: FakePerson;
  readonly channels: Map<string, Channel>;
  readonly interactions: Map<string, Interaction>;
  readonly files: Map<string, Buffer>;
  readonly rateLimits: { pattern: RegExp; retryAfter: number }[];
  readonly buckets: MessageBuckets;
  readonly nonces: NonceMemory;
  readonly holds: Hold[];
  now(): number;
  channel(channelId: string): Channel;
  channelObject(channelId: string): Json;
  dmChannelOf(person: FakePerson): string;
  changed(): void;
}

/**
 * Discord's REST API under `/api/v10` as hob uses it, plus the CDN's attachment downloads:
 * bot auth, 429s on request, the form checks that matter, interaction callbacks and their
 * webhooks (ephemeral answers become notices for one person).
 */
export async function handleRest(fake: RestHost, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const url = new URL(req.url ?? '/', 'http://fake');
  const path = decodeURIComponent(url.pathname);
  const method = req.method ?? 'GET';
  const fileRoute = /^\/attachments\/(\d+)\//.exec(path);
  if (fileRoute) {
    const bytes = fake.files.get(fileRoute[1] as string);
    res.writeHead(bytes ? 200 : 404, { 'content-type': 'application/octet-stream' });
    return void res.end(bytes ?? '');
  }
  const raw = Buffer.concat(chunks);
  const contentType = req.headers['content-type'] ?? '';
  // Bulk overwrites send a JSON array, which the shared multipart-aware parser does not take.
  const parsed = contentType.startsWith('application/json')
    ? { fields: raw.length ? (JSON.parse(raw.toString('utf8')) as Json) : {}, files: [] }
    : parseRequestBody(contentType, raw, new URLSearchParams());
  const body: Json = typeof parsed.fields.payload_json === 'string' ? (JSON.parse(parsed.fields.payload_json) as Json) : parsed.fields;
  const call: RestCall = { method, path: path.replace(/^\/api\/v10/, ''), body, files: parsed.files.map((file) => ({ name: file.fileName, bytes: file.bytes })), auth: req.headers.authorization };
  fake.calls.push(call);
  let extraHeaders: Record<string, string> = {};
  fake.onCall?.(call);
  const answer = (status: number, payload?: unknown): void => {
    call.status = status;
    fake.changed();
    // Only a request that was carried out is held (a refused one is answered at once).
    const hold = status < 400 ? takeHold(fake.holds, `${method} ${call.path}`, body, true) : undefined;
    if (!hold) return json(res, status, payload, extraHeaders);
    hold.markArrived();
    void hold.released.then(() => json(res, status, payload, extraHeaders));
  };
  const limit = fake.rateLimits.findIndex((entry) => entry.pattern.test(`${method} ${call.path}`));
  if (limit >= 0) {
    const { retryAfter } = fake.rateLimits.splice(limit, 1)[0] as { retryAfter: number };
    call.status = 429;
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter), 'x-ratelimit-scope': 'user' });
    res.end(JSON.stringify({ message: 'You are being rate limited.', retry_after: retryAfter, global: false }));
    return fake.changed();
  }
  const unheard = takeHold(fake.holds, `${method} ${call.path}`, body, false);
  if (unheard) {
    unheard.markArrived();
    await unheard.released;
  }
  const isInteraction = /^\/(interactions|webhooks)\//.test(call.path);
  if (!isInteraction && req.headers.authorization !== `Bot ${fake.token}`) return answer(401, { message: '401: Unauthorized', code: 0 });
  const route = (pattern: RegExp): string[] | undefined => pattern.exec(`${method} ${call.path}`)?.slice(1);
  let m: string[] | undefined;
  if (route(/^GET \/gateway\/bot$/)) return answer(200, { url: fake.gatewayUrl, shards: fake.recommendedShards, session_start_limit: { total: 1000, remaining: 999, reset_after: 60_000, max_concurrency: 1 } });
  if (route(/^GET \/users\/@me$/)) return answer(200, userObject(fake.hob));
  if (route(/^GET \/applications\/@me$/)) return answer(200, { id: APP_ID, name: 'hob', flags: fake.applicationFlags, bot_public: false, bot: userObject(fake.hob) });
  if (route(/^POST \/users\/@me\/channels$/)) {
    const person = { id: String(body.recipient_id), name: `user${String(body.recipient_id)}` };
    const id = fake.dmChannelOf(knownPerson(fake, person.id) ?? person);
    return answer(200, fake.channelObject(id));
  }
  if ((m = route(/^PUT \/applications\/(\d+)\/(?:guilds\/(\d+)\/)?commands$/))) {
    const list = (Array.isArray(body) ? body : Object.values(body)) as Json[];
    const invalid = invalidCommands(list);
    if (invalid) return answer(400, { message: 'Invalid Form Body', code: 50035, errors: invalid });
    fake.commands.set(m[1] ? (m[1] as string) : 'global', list);
    return answer(200, list.map((command) => ({ ...command, id: snowflake(), application_id: APP_ID, version: '1' })));
  }
  if ((m = route(/^POST \/channels\/(\d+)\/typing$/))) return answer(204);
  if ((m = route(/^GET \/channels\/(\d+)\/messages$/))) {
    if (!fake.channels.has(m[0] as string)) return answer(404, { message: 'Unknown Channel', code: 10003 });
    return answer(200, channelHistory(fake, m[0] as string, url.searchParams));
  }
  if ((m = route(/^(POST|PATCH) \/channels\/(\d+)\/messages/))) {
    const limited = fake.buckets.take(m[0] === 'POST' ? 'create' : 'edit', m[1] as string, fake.now());
    extraHeaders = limited.headers;
    if (limited.retryAfter !== undefined) return answer(429, { message: 'You are being rate limited.', retry_after: limited.retryAfter, global: false });
  }
  if ((m = route(/^POST \/channels\/(\d+)\/messages$/))) {
    const channel = fake.channels.get(m[0] as string);
    if (!channel) return answer(404, { message: 'Unknown Channel', code: 10003 });
    const invalid = invalidMessage(body, call.files.length);
    if (invalid) return answer(400, invalid);
    const nonce = nonceOf(body);
    if (nonce === null) return answer(400, { message: 'Invalid Form Body', code: 50035, errors: { nonce: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 25 or fewer in length.' }] } } });
    const existing = nonce !== undefined && body.enforce_nonce === true ? fake.nonces.find(fake.hob.id, nonce, fake.now()) : undefined;
    const again = existing !== undefined ? fake.messages.find((message) => message.id === existing) : undefined;
    if (again) return answer(200, { ...again.wire, nonce });
    const stored = storeBotMessage(fake, channel, body, call.files);
    if (nonce !== undefined && body.enforce_nonce === true) fake.nonces.remember(fake.hob.id, nonce, stored.id, fake.now());
    return answer(200, { ...stored.wire, ...(nonce !== undefined ? { nonce } : {}) });
  }
  if ((m = route(/^PATCH \/channels\/(\d+)\/messages\/(\d+)$/))) {
    const stored = fake.messages.find((message) => message.id === m?.[1] && message.channelId === m?.[0] && !message.deleted);
    if (!stored) return answer(404, { message: 'Unknown Message', code: 10008 });
    const invalid = invalidMessage({ content: stored.content, ...body }, 1);
    if (invalid) return answer(400, invalid);
    applyEdit(fake, stored, body);
    return answer(200, stored.wire);
  }
  if ((m = route(/^DELETE \/channels\/(\d+)\/messages\/(\d+)$/))) {
    const stored = fake.messages.find((message) => message.id === m?.[1] && !message.deleted);
    if (!stored) return answer(404, { message: 'Unknown Message', code: 10008 });
    stored.deleted = true;
    return answer(204);
  }
  if ((m = route(/^POST \/interactions\/(\d+)\/([^/]+)\/callback$/))) {
    const interaction = fake.interactions.get(m[0] as string);
    if (!interaction || interaction.token !== m[1]) return answer(404, { message: 'Unknown interaction', code: 10062 });
    if (interaction.acks.length > 0) return answer(400, { message: 'Interaction has already been acknowledged.', code: 40060 });
    const type = Number(body.type);
    interaction.acks.push(type);
    const data = (body.data ?? {}) as Json;
    const ephemeral = (Number(data.flags ?? 0) & 64) !== 0;
    if (type === 4 && ephemeral) fake.notices.push({ userId: interaction.user.id, content: String(data.content ?? ''), interactionId: interaction.id });
    if (type === 4 && !ephemeral) storeBotMessage(fake, fake.channel(interaction.channelId), data, []);
    if (type === 5) interaction.ephemeralOriginal = ephemeral;
    return answer(204);
  }
  if ((m = route(/^(?:PATCH|DELETE) \/webhooks\/(\d+)\/([^/]+)\/messages\/(@original|\d+)$/))) {
    const interaction = [...fake.interactions.values()].find((entry) => entry.token === m?.[1]);
    if (!interaction || interaction.acks.length === 0) return answer(404, { message: 'Unknown Webhook', code: 10015 });
    if (method === 'DELETE') return answer(204);
    if (interaction.ephemeralOriginal) {
      fake.notices.push({ userId: interaction.user.id, content: String(body.content ?? ''), interactionId: interaction.id });
      return answer(200, { id: interaction.originalId ?? snowflake(), channel_id: interaction.channelId, author: userObject(fake.hob), content: body.content, timestamp: new Date().toISOString(), edited_timestamp: null, tts: false, mention_everyone: false, mentions: [], mention_roles: [], attachments: [], embeds: [], pinned: false, type: 20, flags: 64 });
    }
    return answer(404, { message: 'Unknown Message', code: 10008 });
  }
  if ((m = route(/^POST \/webhooks\/(\d+)\/([^/]+)$/))) {
    const interaction = [...fake.interactions.values()].find((entry) => entry.token === m?.[1]);
    if (!interaction || interaction.acks.length === 0) return answer(404, { message: 'Unknown Webhook', code: 10015 });
    const ephemeral = (Number(body.flags ?? 0) & 64) !== 0;
    if (ephemeral) {
      fake.notices.push({ userId: interaction.user.id, content: String(body.content ?? ''), interactionId: interaction.id });
      return answer(200, { id: snowflake(), channel_id: interaction.channelId, author: userObject(fake.hob), content: body.content, timestamp: new Date().toISOString(), edited_timestamp: null, tts: false, mention_everyone: false, mentions: [], mention_roles: [], attachments: [], embeds: [], pinned: false, type: 0, flags: 64 });
    }
    return answer(200, storeBotMessage(fake, fake.channel(interaction.channelId), body, []).wire);
  }
  return answer(404, { message: '404: Not Found', code: 0 });
}

function knownPerson(fake: RestHost, id: string): FakePerson | undefined {
  return fake.messages.find((message) => message.author.id === id)?.author;
}

function storeBotMessage(fake: RestHost, channel: Channel, body: Json, files: { name: string; bytes: Buffer }[]): StoredMessage {
  const reference = body.message_reference as Json | undefined;
  const replyTo = reference?.message_id !== undefined ? String(reference.message_id) : undefined;
  const repliedAuthor = replyTo ? fake.messages.find((message) => message.id === replyTo)?.author.id : undefined;
  const content = String(body.content ?? '');
  const stored: StoredMessage = {
    id: snowflake(), channelId: channel.id, author: fake.hob, content, buttons: buttonsOf(body.components), attachments: files,
    pinged: pingsOf(content, body.allowed_mentions as Json | undefined, repliedAuthor), edits: 0, deleted: false, wire: {}, ...(replyTo ? { replyTo } : {}),
  };
  stored.wire = { ...messageObject(stored, channel.guildId), sent: body };
  fake.messages.push(stored);
  return stored;
}

function applyEdit(fake: RestHost, stored: StoredMessage, body: Json): void {
  if (typeof body.content === 'string') stored.content = body.content;
  if (body.components !== undefined) stored.buttons = buttonsOf(body.components);
  stored.edits += 1;
  stored.wire = { ...messageObject(stored, fake.channels.get(stored.channelId)?.guildId), sent: body };
}

function json(res: http.ServerResponse, status: number, payload?: unknown, headers: Record<string, string> = {}): void {
  // A 204 must not claim JSON: @discordjs/rest would parse the empty body and throw.
  res.writeHead(status, status === 204 ? headers : { 'content-type': 'application/json', ...headers });
  res.end(payload === undefined ? '' : JSON.stringify(payload));
}

/** A create's nonce: undefined without one, null when Discord would refuse it (over 25 characters). */
function nonceOf(body: Json): string | undefined | null {
  if (body.nonce === undefined || body.nonce === null) return undefined;
  const nonce = String(body.nonce);
  return nonce.length > 25 ? null : nonce;
}

/**
 * GET /channels/{id}/messages as Discord answers it: up to `limit` (default 50, at most 100)
 * messages after `after` (the oldest ones after it) or before `before`, newest first,
 * deleted ones gone, and no nonce (Discord does not keep it with the message).
 */
function channelHistory(fake: RestHost, channelId: string, query: URLSearchParams): Json[] {
  const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 50)));
  const after = query.get('after');
  const before = query.get('before');
  const newer = (a: string, b: string) => (a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)) > 0;
  let list = fake.messages.filter((message) => message.channelId === channelId && !message.deleted);
  if (after) list = list.filter((message) => newer(message.id, after)).slice(0, limit);
  else {
    if (before) list = list.filter((message) => newer(before, message.id));
    list = list.slice(-limit);
  }
  const guildId = fake.channels.get(channelId)?.guildId;
  return list.reverse().map((message) => messageObject(message, guildId));
}

function buttonsOf(components: unknown): StoredMessage['buttons'] {
  if (!Array.isArray(components)) return [];
  return components.map((row) => (((row as Json).components ?? []) as Json[]).map((button) => ({ label: String(button.label ?? ''), customId: String(button.custom_id ?? '') })));
}

/** Discord's form checks that matter to hob: the 2,000-character limit, empty messages, component sizes. */
function invalidMessage(body: Json, fileCount: number): Json | undefined {
  const content = typeof body.content === 'string' ? body.content : '';
  if (content.length > 2000) return { message: 'Invalid Form Body', code: 50035, errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } } };
  const rows = Array.isArray(body.components) ? (body.components as Json[]) : [];
  if (content === '' && fileCount === 0 && rows.length === 0) return { message: 'Cannot send an empty message', code: 50006 };
  const tooBig = rows.length > 5 || rows.some((row) => {
    const buttons = ((row.components ?? []) as Json[]);
    return buttons.length > 5 || buttons.some((button) => String(button.custom_id ?? '').length > 100 || String(button.label ?? '').length > 80);
  });
  return tooBig ? { message: 'Invalid Form Body', code: 50035 } : undefined;
}

/** Discord's checks on a bulk overwrite of chat-input commands: at most 100, names 1–32 lowercase and unique, descriptions 1–100. */
function invalidCommands(list: Json[]): string | undefined {
  if (list.length > 100) return `${list.length} commands: at most 100`;
  const names = new Set<string>();
  for (const command of list) {
    const name = String(command.name);
    if (!/^[-_\p{L}\p{N}]{1,32}$/u.test(name) || name !== name.toLowerCase()) return `name "${name}": 1–32 lowercase letters, digits, - or _`;
    if (names.has(name)) return `name "${name}" used twice`;
    names.add(name);
    const descriptions = [command.description, ...((command.options as Json[] | undefined) ?? []).map((option) => option.description)];
    const bad = descriptions.find((description) => typeof description !== 'string' || description.length < 1 || description.length > 100);
    if (bad !== undefined) return `command "${name}": a description is 1–100 characters`;
  }
  return undefined;
}
