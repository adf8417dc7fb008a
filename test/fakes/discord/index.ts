import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Waiters } from '../waiters.js';
import { FakeGateway, shardOf } from './gateway.js';
import { guildCreate, guildIdOnShard, type FakeGuild } from './guilds.js';
import { handleRest, type RestHost } from './rest.js';
import { MessageBuckets, newHold, NonceMemory, type Hold, type HoldOptions } from './limits.js';
import {
  APP_ID, BOT_ID, BOT_ROLE_ID, GENERAL_ID, GUILD_ID, memberObject, messageObject, snowflake, userObject,
  type Channel, type FakePerson, type Interaction, type Json, type Notice, type RestCall, type StoredMessage,
} from './world.js';

export { APP_ID, BOT_ID, BOT_ROLE_ID, GENERAL_ID, GUILD_ID } from './world.js';
export { shardOf } from './gateway.js';
export type { FakePerson, Notice, RestCall, StoredMessage } from './world.js';

export type FakeDiscordOptions = {
  token?: string;
  heartbeatIntervalMs?: number;
  /** The application's flags as GET /applications/@me reports them (default: Message Content, limited). */
  applicationFlags?: number;
  /** The shard count GET /gateway/bot recommends (Discord: one per 1,000 servers). */
  recommendedShards?: number;
};


const HOB: FakePerson = { id: BOT_ID, name: 'hob', bot: true };
/** GATEWAY_MESSAGE_CONTENT_LIMITED: what a new, unverified application gets when the intent is switched on. */
export const MESSAGE_CONTENT_LIMITED = 1 << 19;

/**
 * A loopback Discord for the real discord.js client: REST under `/api/v10` (point
 * `rest.api` at `fake.apiRoot`) and a gateway websocket found through `GET /gateway/bot`.
 * Tests act as people (say, dm, press, slash) and read what people see (messages, notices).
 */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const fake = new FakeDiscord(options);
  await fake.listen();
  return fake;
}

/** MessageFlags.IsVoiceMessage (1 << 13). */
const VOICE_MESSAGE_FLAG = 1 << 13;

export class FakeDiscord implements RestHost {
  readonly token: string;
  /** `http://127.0.0.1:PORT/api`: discord.js appends `/v10`. */
  apiRoot = '';
  readonly calls: RestCall[] = [];
  /** Called on every REST call as it arrives, before it is answered (benchmarks time replies with it). */
  onCall: ((call: RestCall) => void) | undefined;
  readonly notices: Notice[] = [];
  /** Application commands as last bulk-overwritten: `global` or a guild id → their bodies. */
  readonly commands = new Map<string, Json[]>();
  readonly gateway: FakeGateway;
  readonly messages: StoredMessage[] = [];
  applicationFlags: number;
  readonly recommendedShards: number;
  readonly hob = HOB;
  /** The servers hob is in, by id (one to begin with: GUILD_ID with its #general, GENERAL_ID). */
  readonly guilds = new Map<string, FakeGuild>([[GUILD_ID, { id: GUILD_ID, name: 'Fake Guild' }]]);
  /** @internal the state the REST routes (rest.ts) work on */
  readonly channels = new Map<string, Channel>();
  /** @internal */
  readonly interactions = new Map<string, Interaction>();
  /** @internal attachment bytes people sent, served as the CDN would */
  readonly files = new Map<string, Buffer>();
  /** @internal */
  readonly rateLimits: { pattern: RegExp; retryAfter: number }[] = [];
  /** @internal `http://127.0.0.1:PORT` */
  origin = '';
  /** The per-channel message buckets (5 creates and 5 edits per 5 s); tests may loosen them. */
  readonly buckets = new MessageBuckets();
  /** Nonces remembered for `enforce_nonce` (a few minutes). */
  readonly nonces = new NonceMemory();
  /** @internal answers held back (see holdNext) */
  readonly holds: Hold[] = [];
  /** How far the fake's clock is ahead of the real one (tests move it: "minutes later"). */
  clockOffsetMs = 0;
  private readonly waiters = new Waiters();
  private server: http.Server | undefined;

  constructor(options: FakeDiscordOptions) {
    this.token = options.token ?? 'MTEwMDAwMDAwMDAwMDAwMDAwMg.fake.discord-token-for-tests';
    this.applicationFlags = options.applicationFlags ?? MESSAGE_CONTENT_LIMITED;
    this.recommendedShards = options.recommendedShards ?? 1;
    this.channels.set(GENERAL_ID, { id: GENERAL_ID, type: 0, guildId: GUILD_ID, name: 'general' });
    this.gateway = new FakeGateway({
      token: this.token,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      ready: (sessionId, resumeUrl, shard) => this.readyPayload(sessionId, resumeUrl, shard),
      changed: () => this.changed(),
    });
  }

  /** @internal started by startFakeDiscord */
  async listen(): Promise<void> {
    await this.gateway.listen();
    this.server = http.createServer((req, res) => {
      handleRest(this, req, res).catch((error: unknown) => {
        if (res.headersSent) return;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `fake Discord bug: ${String(error)}`, code: 0 }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.apiRoot = `${this.origin}/api`;
  }

  // --- what people do ---------------------------------------------------------------------

  /**
   * hob joins another server with a #general channel; `onShard` picks an id Discord routes to
   * that shard (`[id, count]`). Bots connected before see it only after they identify again.
   */
  addGuild(name: string, onShard: [number, number] = [0, 1]): { guildId: string; channelId: string } {
    const guildId = guildIdOnShard(onShard);
    const channelId = snowflake();
    this.guilds.set(guildId, { id: guildId, name });
    this.channels.set(channelId, { id: channelId, type: 0, guildId, name: 'general' });
    return { guildId, channelId };
  }

  /** The DM channel between hob and this person (the same id every time, as on Discord). */
  dmChannelOf(person: FakePerson): string {
    const id = `19${person.id.padStart(17, '0')}`;
    if (!this.channels.has(id)) this.channels.set(id, { id, type: 1, recipient: person });
    return id;
  }

  /** A public thread under #general, announced with THREAD_CREATE. Returns its id. */
  createThread(name: string): string {
    const id = snowflake();
    this.channels.set(id, { id, type: 11, guildId: GUILD_ID, parentId: GENERAL_ID, name });
    this.gateway.dispatch('THREAD_CREATE', { ...this.channelObject(id), newly_created: true });
    return id;
  }

  /**
   * A person records a voice message (Discord's: Ogg/Opus, no text, flag IS_VOICE_MESSAGE, its
   * length and waveform on the attachment). Returns the message id.
   */
  sayVoice(person: FakePerson, channelId: string, bytes: Buffer, seconds: number, extra: { replyTo?: string } = {}): string {
    return this.say(person, channelId, '', { ...extra, files: [{ name: 'voice-message.ogg', bytes, contentType: 'audio/ogg' }], voiceSeconds: seconds });
  }

  /** A person writes in a channel (a DM, #general or a thread). Returns the message id. */
  say(person: FakePerson, channelId: string, content: string, extra: { replyTo?: string; files?: { name: string; bytes: Buffer; contentType: string }[]; voiceSeconds?: number } = {}): string {
    const channel = this.channel(channelId);
    const id = snowflake();
    const referenced = extra.replyTo ? this.messages.find((message) => message.id === extra.replyTo) : undefined;
    const stored: StoredMessage = { id, channelId, author: person, content, buttons: [], attachments: [], pinged: [], edits: 0, deleted: false, wire: {}, ...(extra.replyTo ? { replyTo: extra.replyTo } : {}) };
    const wire = messageObject(stored, channel.guildId, referenced);
    wire.attachments = (extra.files ?? []).map((file, index) => {
      const fileId = `${id}${index}`;
      this.files.set(fileId, file.bytes);
      const voice = extra.voiceSeconds !== undefined ? { duration_secs: extra.voiceSeconds, waveform: Buffer.alloc(32, 128).toString('base64') } : {};
      return { id: fileId, filename: file.name, size: file.bytes.length, content_type: file.contentType, url: `${this.origin}/attachments/${fileId}/${file.name}`, proxy_url: `${this.origin}/attachments/${fileId}/${file.name}`, ...voice };
    });
    if (extra.voiceSeconds !== undefined) wire.flags = VOICE_MESSAGE_FLAG;
    if (channel.guildId) wire.member = memberObject(person);
    // Without channel_type discord.js 14.28 cannot build a DM channel it has not seen (Partials.Channel).
    else wire.channel_type = 1;
    stored.wire = wire;
    this.messages.push(stored);
    this.gateway.dispatch('MESSAGE_CREATE', wire);
    this.changed();
    return id;
  }

  /**
   * The author edits a message: MESSAGE_UPDATE with the whole message and its edit time
   * (`editedAfterSeconds` after it was sent). Without `content`, Discord adding a link
   * preview: an update with no edit time.
   */
  edit(messageId: string, content?: string, editedAfterSeconds = 5): void {
    const stored = this.messages.find((message) => message.id === messageId);
    if (!stored) throw new Error(`no message ${messageId} to edit`);
    const channel = this.channel(stored.channelId);
    const sentAt = Date.parse(String(stored.wire.timestamp));
    if (content !== undefined) stored.content = content;
    const wire: Json = {
      ...stored.wire,
      content: stored.content,
      edited_timestamp: content !== undefined ? new Date(sentAt + editedAfterSeconds * 1000).toISOString() : null,
      ...(content === undefined ? { embeds: [{ type: 'link', url: 'https://example.com' }] } : {}),
    };
    if (!channel.guildId) wire.channel_type = 1;
    this.gateway.dispatch('MESSAGE_UPDATE', wire);
  }

  dm(person: FakePerson, content: string): string {
    return this.say(person, this.dmChannelOf(person), content);
  }

  /** A person presses a button on one of hob's messages (an INTERACTION_CREATE of type 3). Returns the interaction id. */
  press(person: FakePerson, messageId: string, customId: string): string {
    const message = this.messages.find((entry) => entry.id === messageId);
    if (!message) throw new Error(`no message ${messageId} to press a button on`);
    const channel = this.channel(message.channelId);
    return this.interact(person, channel, { type: 3, message: messageObject(message, channel.guildId), data: { custom_id: customId, component_type: 2 } });
  }

  /** A person uses an application command, `args` in its string option. Returns the interaction id. */
  slash(person: FakePerson, channelId: string, name: string, args?: string): string {
    const channel = this.channel(channelId);
    const options = args !== undefined ? [{ name: 'args', type: 3, value: args }] : [];
    return this.interact(person, channel, { type: 2, data: { id: snowflake(), name, type: 1, options } });
  }

  /** Sends the same INTERACTION_CREATE again (as a replayed dispatch would). */
  replayInteraction(interactionId: string): void {
    const event = this.dispatched.get(interactionId);
    if (!event) throw new Error(`no interaction ${interactionId}`);
    this.gateway.dispatch('INTERACTION_CREATE', event);
  }

  /** The fake's time: the real clock, moved on by `clockOffsetMs`. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /**
   * The next request whose `METHOD /path` matches is carried out (a message is in the
   * channel) but its answer is held back until `release` (or forever): as when hob dies
   * before it hears from Discord. `options` narrow it to a body and can hold it before it is
   * carried out (see HoldOptions).
   */
  holdNext(pattern: RegExp, options: HoldOptions = {}): Hold {
    const hold = newHold(pattern, options);
    this.holds.push(hold);
    return hold;
  }

  /** The next `count` requests whose `METHOD /path` matches answer 429 with `retryAfter` seconds. */
  rateLimitNext(pattern: RegExp, retryAfter: number, count = 1): void {
    for (let index = 0; index < count; index++) this.rateLimits.push({ pattern, retryAfter });
  }

  // --- what people see --------------------------------------------------------------------

  /** hob's messages in a channel as they look now (deleted ones left out). */
  botMessages(channelId: string): StoredMessage[] {
    return this.messages.filter((message) => message.channelId === channelId && message.author.id === BOT_ID && !message.deleted);
  }

  noticesFor(person: FakePerson): string[] {
    return this.notices.filter((notice) => notice.userId === person.id).map((notice) => notice.content);
  }

  /** The interaction callbacks' types in order (4 message, 5 deferred message, 6 deferred update, 7 update). */
  acksOf(interactionId: string): number[] {
    return this.interactions.get(interactionId)?.acks ?? [];
  }

  restCalls(method: string, path: RegExp): RestCall[] {
    return this.calls.filter((call) => call.method === method && path.test(call.path));
  }

  waitFor<T>(probe: () => T | undefined | null | false, timeoutMs = 8000, what = 'condition'): Promise<T> {
    return this.waiters.waitFor(probe, timeoutMs, () => {
      const recent = this.calls.slice(-6).map((call) => `${call.method} ${call.path} → ${call.status}`).join(', ');
      return `fake Discord: timed out after ${timeoutMs} ms waiting for ${what}; last calls: ${recent || 'none'}`;
    });
  }

  /** @internal */
  get gatewayUrl(): string {
    return this.gateway.url;
  }

  async close(): Promise<void> {
    await this.gateway.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  // --- internals --------------------------------------------------------------------------

  private readonly dispatched = new Map<string, Json>();

  private interact(person: FakePerson, channel: Channel, fields: Json): string {
    const id = snowflake();
    const token = `itoken-${id}`;
    this.interactions.set(id, { id, token, user: person, channelId: channel.id, acks: [], ephemeralOriginal: false });
    const event: Json = {
      id, application_id: APP_ID, token, version: 1, channel_id: channel.id, channel: this.channelObject(channel.id),
      ...(channel.guildId ? { guild_id: channel.guildId, member: memberObject(person), context: 0 } : { user: userObject(person), context: 1 }),
      locale: 'en-US', app_permissions: '1071698660929', entitlements: [], authorizing_integration_owners: { 0: channel.guildId ?? '0' }, attachment_size_limit: 8_388_608,
      ...fields,
    };
    this.dispatched.set(id, event);
    this.gateway.dispatch('INTERACTION_CREATE', event);
    return id;
  }

  /** @internal */
  channel(channelId: string): Channel {
    const channel = this.channels.get(channelId);
    if (!channel) throw new Error(`fake Discord has no channel ${channelId}`);
    return channel;
  }

  /** @internal */
  channelObject(channelId: string): Json {
    const channel = this.channel(channelId);
    switch (channel.type) {
      case 1:
        return { id: channel.id, type: 1, last_message_id: null, recipients: channel.recipient ? [userObject(channel.recipient)] : [] };
      case 11:
        return {
          id: channel.id, type: 11, guild_id: channel.guildId, parent_id: channel.parentId, name: channel.name, owner_id: '1', message_count: 0, member_count: 1,
          thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false }, flags: 0, rate_limit_per_user: 0,
        };
      default:
        return { id: channel.id, type: channel.type, guild_id: channel.guildId, name: channel.name, position: 0, permission_overwrites: [] };
    }
  }

  private readyPayload(sessionId: string, resumeUrl: string, shard: [number, number]): { ready: Json; after: { t: string; d: Json }[] } {
    const guilds = [...this.guilds.values()].filter((guild) => shardOf(guild.id, shard[1]) === shard[0]);
    const inGuild = (guild: FakeGuild, type: (type: number) => boolean) =>
      [...this.channels.values()].filter((channel) => channel.guildId === guild.id && type(channel.type)).map((channel) => this.channelObject(channel.id));
    return {
      ready: { v: 10, user: userObject(HOB), guilds: guilds.map((guild) => ({ id: guild.id, unavailable: true })), session_id: sessionId, resume_gateway_url: resumeUrl, shard, application: { id: APP_ID, flags: this.applicationFlags }, private_channels: [] },
      after: guilds.map((guild) => ({ t: 'GUILD_CREATE', d: guildCreate(guild, inGuild(guild, (type) => type !== 11), inGuild(guild, (type) => type === 11)) })),
    };
  }

  /** @internal tells waiters to look again */
  changed(): void {
    this.waiters.changed();
  }
}
