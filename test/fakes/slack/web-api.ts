import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRequestBody } from '../telegram/request-body.js';

/** A file a person attaches; `subtype: 'slack_audio'` with `durationMs` is a clip recorded in Slack (its voice note). */
export type PersonFile = { name: string; mimetype: string; bytes: Buffer; subtype?: 'slack_audio' | 'slack_video'; durationMs?: number };

/** Slack's file object for a person's file (what events and files.info carry). */
export function fileObject(id: string, file: PersonFile): Record<string, unknown> {
  return {
    id,
    name: file.name,
    mimetype: file.mimetype,
    size: file.bytes.length,
    ...(file.subtype ? { subtype: file.subtype, media_display_type: file.subtype === 'slack_audio' ? 'audio' : 'video' } : {}),
    ...(file.durationMs !== undefined ? { duration_ms: file.durationMs } : {}),
  };
}

/** One recorded Web API call (form or JSON body, decoded; JSON-valued fields parsed). */
export type ApiCall = { method: string; token: string | undefined; params: Record<string, unknown> };

export type SlackButtonSeen = { label: string; value: string; actionId: string };

/** A message in the fake workspace, as a person reads it now. */
export type FakeMessage = {
  ts: string;
  channel: string;
  threadTs?: string;
  user: string;
  /** What a person reads: the markdown block or section text, else `text`. */
  text: string;
  buttons: SlackButtonSeen[];
  blocks?: unknown[];
  deleted: boolean;
  /** Set for a streamed message: whether the stream was stopped. */
  stream?: 'streaming' | 'stopped';
  /**
   * The broadcast mentions Slack would act on (`channel`, `here`, `everyone`, `subteam^S1`):
   * read from the notification text, mrkdwn sections, markdown blocks and the streamed
   * markdown as a whole (a mention split over two appends still counts), never from
   * plain_text; with `link_names` also a bare `@channel`.
   */
  broadcasts: string[];
  /** What people read of it over time: its text when posted and after each edit or append. */
  versions: string[];
  /** Its message metadata (chat.postMessage, chat.update, chat.stopStream), as conversations.history returns it. */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  files?: { id: string; name: string; bytes: Buffer }[];
};

/** A message people (or other bots) wrote, as its event carried it: conversations.replies reads these too. */
export type EventMessage = { ts: string; channel: string; threadTs?: string; user?: string; botId?: string; text: string };

export type Ephemeral = { channel: string; user: string; text: string; threadTs?: string; via: 'chat.postEphemeral' | 'response_url' };

/** A scripted failure for the next call of a method: a Slack error, or HTTP 429 with Retry-After. */
export type Failure = { error: string } | { status: 429; retryAfterSeconds: number };

type Handler = (params: Record<string, unknown>, token: string | undefined) => Record<string, unknown>;

/** A call whose answer the fake holds back (see `holdNext`). */
export type Hold = { arrived: Promise<void>; released: Promise<void>; markArrived(): void; release(): void };

/** Which call `holdNext` holds, and whether it is carried out first. */
export type HoldOptions = {
  /** Only a call whose parameters pass this is held (default: the next call of the method). */
  when?: (params: Record<string, unknown>) => boolean;
  /**
   * false: held before it is carried out, so the workspace does not change until `release`:
   * as a request still on its way when hob died. Default true (carried out, answer held).
   */
  carriedOut?: boolean;
};

type PendingHold = Hold & Required<Pick<HoldOptions, 'carriedOut'>> & Pick<HoldOptions, 'when'>;

/**
 * The Slack Web API methods hob uses, over HTTP on 127.0.0.1: always HTTP 200 with
 * `{ok, ...}` (Slack's way) except a scripted 429 with Retry-After. Keeps the workspace's
 * messages, reactions, ephemerals, files and assistant statuses for tests to read.
 */
export class FakeWebApi {
  readonly calls: ApiCall[] = [];
  /** Called on every recorded call, as it arrives (benchmarks time replies with it). */
  onCall: ((call: ApiCall) => void) | undefined;
  readonly messages: FakeMessage[] = [];
  /** Messages that reached the workspace as events (people's, other bots'), for conversations.replies. */
  readonly eventMessages: EventMessage[] = [];
  readonly ephemerals: Ephemeral[] = [];
  readonly reactions: { channel: string; ts: string; name: string; removed: boolean }[] = [];
  readonly statuses: { channel: string; threadTs: string; status: string }[] = [];
  readonly uploads = new Map<string, { name: string; bytes: Buffer }>();
  /** Files people attached, served at /files/<id> to the bot token only. */
  readonly peopleFiles = new Map<string, PersonFile>();
  readonly people = new Map<string, string>();
  /** The scopes the bot token reports (x-oauth-scopes). */
  scopes: string[] = [...SCOPES];
  /** Set by the socket side: the URL apps.connections.open hands out. */
  socketUrl = '';
  /**
   * The app's extra app-level tokens (Slack lets an app have several), each with a label the
   * Socket Mode URL it opens carries, so a test knows which process a connection is.
   */
  readonly labelledAppTokens = new Map<string, string>();
  private readonly failures = new Map<string, { failure: Failure; when?: (params: Record<string, unknown>) => boolean }[]>();
  private readonly refusals = new Map<string, string>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  private readonly holds = new Map<string, PendingHold[]>();
  /** chat.update calls in the last minute (Tier 3: Slack answers 429 past `updatesPerMinute`). */
  private readonly updates: number[] = [];
  /** Tier 3's allowance for chat.update, per app and workspace. */
  updatesPerMinute = 50;
  /** How far the fake's clock is ahead of the real one (tests move it: "minutes later"). */
  clockOffsetMs = 0;
  private counter = 0;

  constructor(
    readonly botToken: string,
    readonly appToken: string,
    readonly bot: { userId: string; botId: string; teamId: string; name: string },
  ) {}

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get apiUrl(): string {
    return `${this.origin}/api/`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next call of `method` (that `when` accepts, if given) fails so (once per entry). */
  failNext(method: string, failure: Failure, when?: (params: Record<string, unknown>) => boolean): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), { failure, when }]);
  }

  /**
   * The next call of `method` (that `when` accepts) is carried out (its message is in the
   * workspace) but its answer is held back until `release` (or forever): as when hob dies
   * before hearing from Slack. With `carriedOut: false` it is held before it is carried out.
   */
  holdNext(method: string, options: HoldOptions = {}): Hold {
    let arrived: () => void = () => undefined;
    let release: () => void = () => undefined;
    const hold: PendingHold = {
      arrived: new Promise<void>((resolve) => (arrived = resolve)),
      released: new Promise<void>((resolve) => (release = resolve)),
      markArrived: () => arrived(),
      release: () => release(),
      when: options.when,
      carriedOut: options.carriedOut ?? true,
    };
    this.holds.set(method, [...(this.holds.get(method) ?? []), hold]);
    return hold;
  }

  /** Takes the first hold of `method` that is for this call (carried out first or not). */
  private takeHold(method: string, params: Record<string, unknown>, carriedOut: boolean): PendingHold | undefined {
    const holds = this.holds.get(method) ?? [];
    const index = holds.findIndex((hold) => hold.carriedOut === carriedOut && (hold.when?.(params) ?? true));
    return index < 0 ? undefined : holds.splice(index, 1)[0];
  }

  /** Every call of `method` fails with this Slack error (a workspace without the feature). */
  refuse(method: string, error: string): void {
    this.refusals.set(method, error);
  }

  /** An event sent to the bot: a message event is a message in the workspace from then on (an edit changes its text). */
  recordEvent(event: Record<string, unknown>): void {
    if (event.type !== 'message' || typeof event.channel !== 'string') return;
    const channel = event.channel;
    if (event.subtype === 'message_changed') {
      const edited = event.message as { ts?: string; text?: string } | undefined;
      const known = this.eventMessages.find((message) => message.channel === channel && message.ts === edited?.ts);
      if (known && typeof edited?.text === 'string') known.text = edited.text;
      return;
    }
    if (typeof event.ts !== 'string' || this.eventMessages.some((message) => message.channel === channel && message.ts === event.ts)) return;
    this.eventMessages.push({
      ts: event.ts,
      channel,
      text: typeof event.text === 'string' ? event.text : '',
      ...(typeof event.thread_ts === 'string' ? { threadTs: event.thread_ts } : {}),
      ...(typeof event.user === 'string' ? { user: event.user } : {}),
      ...(typeof event.bot_id === 'string' ? { botId: event.bot_id } : {}),
    });
  }

  /** A thread as conversations.replies returns it: the parent, then the replies, oldest first (bot posts and event messages). */
  thread(channel: string, threadTs: string, withMetadata = false): { type: 'message'; ts: string; user?: string; bot_id?: string; text: string; thread_ts?: string; metadata?: FakeMessage['metadata'] }[] {
    const bots = this.messages
      .filter((message) => message.channel === channel && !message.deleted && (message.ts === threadTs || message.threadTs === threadTs))
      .map((message) => ({ ts: message.ts, threadTs: message.threadTs, user: message.user, botId: this.bot.botId, text: message.text, ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}) }));
    const others = this.eventMessages.filter((message) => message.channel === channel && (message.ts === threadTs || message.threadTs === threadTs));
    const all = [...bots, ...others].sort((a, b) => Number(a.ts) - Number(b.ts));
    const hasReplies = all.some((message) => message.ts !== threadTs);
    return all.map((message) => ({
      type: 'message' as const,
      ts: message.ts,
      text: message.text,
      ...(message.user !== undefined ? { user: message.user } : {}),
      ...(message.botId !== undefined ? { bot_id: message.botId } : {}),
      ...(message.threadTs !== undefined ? { thread_ts: message.threadTs } : message.ts === threadTs && hasReplies ? { thread_ts: threadTs } : {}),
      ...('metadata' in message && message.metadata ? { metadata: message.metadata } : {}),
    }));
  }

  /** Reading a conversation's messages needs its kind's history scope. */
  private requireHistoryScope(channel: string): void {
    const needed = channel.startsWith('D') ? 'im:history' : channel.startsWith('G') ? 'groups:history' : 'channels:history';
    if (!this.scopes.includes(needed)) throw new Error('missing_scope');
  }

  callsOf(method: string): ApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** A fresh message ts, increasing like Slack's: the (fake) time in seconds, then a counter. */
  nextTs(): string {
    this.counter += 1;
    return `${Math.floor((Date.now() + this.clockOffsetMs) / 1000)}.${String(this.counter).padStart(6, '0')}`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', this.origin);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname.startsWith('/upload/')) {
      const id = url.pathname.slice('/upload/'.length);
      const upload = this.uploads.get(id);
      if (upload) upload.bytes = fileBytes(raw, req.headers['content-type'] ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('OK - ' + raw.length);
      return;
    }
    if (url.pathname.startsWith('/files/')) {
      const file = this.peopleFiles.get(url.pathname.slice('/files/'.length));
      if (!file || req.headers.authorization !== `Bearer ${this.botToken}`) {
        // Slack's way of refusing a private file: its sign-in page.
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>sign in</html>');
        return;
      }
      res.writeHead(200, { 'content-type': file.mimetype });
      res.end(file.bytes);
      return;
    }
    if (url.pathname.startsWith('/response/')) {
      const [channel = '', user = ''] = decodeURIComponent(url.pathname.slice('/response/'.length)).split('/');
      const body = JSON.parse(raw.toString() || '{}') as { text?: string };
      this.ephemerals.push({ channel, user, text: body.text ?? '', via: 'response_url' });
      send(200, { ok: true });
      return;
    }
    const method = url.pathname.replace(/^\/api\//, '');
    const params = parseParams(raw.toString(), req.headers['content-type'] ?? '');
    const token = req.headers.authorization?.replace(/^Bearer /, '') ?? (typeof params.token === 'string' ? params.token : undefined);
    const call = { method, token, params };
    this.calls.push(call);
    this.onCall?.(call);
    const failures = this.failures.get(method) ?? [];
    const failing = failures.findIndex((entry) => entry.when?.(params) ?? true);
    const failure = failing < 0 ? undefined : failures.splice(failing, 1)[0]?.failure;
    if (failure && 'status' in failure) {
      send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(failure.retryAfterSeconds) });
      return;
    }
    if (failure) return send(200, { ok: false, error: failure.error });
    if (method === 'chat.update') {
      const now = Date.now() + this.clockOffsetMs;
      while ((this.updates[0] ?? Infinity) <= now - 60_000) this.updates.shift();
      if (this.updates.length >= this.updatesPerMinute) {
        const wait = Math.max(1, Math.ceil(((this.updates[0] ?? now) + 60_000 - now) / 1000));
        return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(wait) });
      }
      this.updates.push(now);
    }
    const refusal = this.refusals.get(method);
    if (refusal) return send(200, { ok: false, error: refusal });
    const known = method === 'apps.connections.open' ? token === this.appToken || this.labelledAppTokens.has(token ?? '') : token === this.botToken;
    if (!known) return send(200, { ok: false, error: 'invalid_auth' });
    const handler = this.handlers[method];
    if (!handler) return send(200, { ok: false, error: 'unknown_method' });
    const unheard = this.takeHold(method, params, false);
    if (unheard) {
      unheard.markArrived();
      await unheard.released;
    }
    let answer: Record<string, unknown>;
    try {
      answer = { ok: true, ...handler(params, token) };
    } catch (error) {
      answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    const hold = this.takeHold(method, params, true);
    if (hold) {
      hold.markArrived();
      await hold.released;
    }
    send(200, answer, { 'x-oauth-scopes': this.scopes.join(',') });
  }

  private message(channel: string, ts: string): FakeMessage {
    const found = this.messages.find((message) => message.channel === channel && message.ts === ts && !message.deleted);
    if (!found) throw new Error('message_not_found');
    return found;
  }

  private readonly handlers: Record<string, Handler> = {
    'auth.test': () => ({ url: 'https://fake.slack.com/', team: 'Fake', user: this.bot.name, team_id: this.bot.teamId, user_id: this.bot.userId, bot_id: this.bot.botId }),
    'apps.connections.open': (_params, token) => {
      const label = this.labelledAppTokens.get(token ?? '');
      return { url: label === undefined ? this.socketUrl : `${this.socketUrl}&label=${encodeURIComponent(label)}` };
    },
    'chat.postMessage': (params) => {
      const channel = String(params.channel);
      const metadata = metadataOf(params);
      const message: FakeMessage = { ts: this.nextTs(), channel, user: this.bot.userId, deleted: false, ...readable(params), broadcasts: broadcastsIn(params), versions: [], ...(metadata ? { metadata } : {}) };
      message.versions.push(message.text);
      if (typeof params.thread_ts === 'string') message.threadTs = params.thread_ts;
      this.messages.push(message);
      return { channel, ts: message.ts, message: { text: message.text } };
    },
    'chat.update': (params) => {
      const message = this.message(String(params.channel), String(params.ts));
      const metadata = metadataOf(params);
      Object.assign(message, readable(params), { broadcasts: [...new Set([...message.broadcasts, ...broadcastsIn(params)])] }, metadata ? { metadata } : {});
      message.versions.push(message.text);
      return { channel: message.channel, ts: message.ts };
    },
    'chat.delete': (params) => {
      this.message(String(params.channel), String(params.ts)).deleted = true;
      return { channel: params.channel, ts: params.ts };
    },
    'chat.postEphemeral': (params) => {
      this.ephemerals.push({ channel: String(params.channel), user: String(params.user), text: String(params.text ?? ''), ...(typeof params.thread_ts === 'string' ? { threadTs: params.thread_ts } : {}), via: 'chat.postEphemeral' });
      return { message_ts: this.nextTs() };
    },
    'chat.startStream': (params) => {
      if (typeof params.thread_ts !== 'string') throw new Error('invalid_arguments');
      if (!String(params.channel).startsWith('D') && (params.recipient_user_id === undefined || params.recipient_team_id === undefined)) throw new Error('missing_recipient_user_id');
      const text = chunkText(params);
      const message: FakeMessage = { ts: this.nextTs(), channel: String(params.channel), threadTs: params.thread_ts, user: this.bot.userId, text, buttons: [], deleted: false, stream: 'streaming', broadcasts: mentionsIn(text), versions: [text] };
      this.messages.push(message);
      return { channel: message.channel, ts: message.ts };
    },
    'chat.appendStream': (params) => {
      const message = this.message(String(params.channel), String(params.ts));
      if (message.stream !== 'streaming') throw new Error('message_not_in_streaming_state');
      message.text += chunkText(params);
      message.broadcasts = mentionsIn(message.text);
      message.versions.push(message.text);
      return { channel: message.channel, ts: message.ts };
    },
    'chat.stopStream': (params) => {
      const message = this.message(String(params.channel), String(params.ts));
      if (message.stream !== 'streaming') throw new Error('message_not_in_streaming_state');
      const metadata = metadataOf(params);
      message.text += chunkText(params);
      message.broadcasts = mentionsIn(message.text);
      message.versions.push(message.text);
      message.stream = 'stopped';
      if (metadata) message.metadata = metadata;
      return { channel: message.channel, ts: message.ts, message: { text: message.text } };
    },
    'reactions.add': (params) => {
      this.reactions.push({ channel: String(params.channel), ts: String(params.timestamp), name: String(params.name), removed: false });
      return {};
    },
    'reactions.remove': (params) => {
      const reaction = this.reactions.find((entry) => entry.channel === params.channel && entry.ts === params.timestamp && entry.name === params.name && !entry.removed);
      if (!reaction) throw new Error('no_reaction');
      reaction.removed = true;
      return {};
    },
    'conversations.open': (params) => ({ channel: { id: dmOf(String(params.users)) } }),
    'conversations.replies': (params) => {
      const channel = String(params.channel ?? '');
      if (typeof params.ts !== 'string' || channel === '') throw new Error('invalid_arguments');
      this.requireHistoryScope(channel);
      const thread = this.thread(channel, params.ts, params.include_all_metadata === true || params.include_all_metadata === 'true');
      if (thread.length === 0) throw new Error('thread_not_found');
      // `oldest` leaves out older replies; the parent always comes first.
      const oldest = Number(params.oldest ?? 0);
      return page(thread.filter((message, index) => index === 0 || Number(message.ts) >= oldest), params, 1000);
    },
    'conversations.history': (params) => {
      const channel = String(params.channel ?? '');
      if (channel === '') throw new Error('invalid_arguments');
      this.requireHistoryScope(channel);
      const withMetadata = params.include_all_metadata === true || params.include_all_metadata === 'true';
      const oldest = Number(params.oldest ?? 0);
      const latest = params.latest === undefined ? Infinity : Number(params.latest);
      // The top of the channel (thread replies stay in their threads), newest first.
      const top = [
        ...this.messages.filter((message) => message.channel === channel && !message.deleted && message.threadTs === undefined).map((message) => ({
          type: 'message' as const, ts: message.ts, text: message.text, user: message.user, bot_id: this.bot.botId, ...(withMetadata && message.metadata ? { metadata: message.metadata } : {}),
        })),
        ...this.eventMessages.filter((message) => message.channel === channel && message.threadTs === undefined).map((message) => ({ type: 'message' as const, ts: message.ts, text: message.text, ...(message.user !== undefined ? { user: message.user } : {}) })),
      ]
        .filter((message) => Number(message.ts) >= oldest && Number(message.ts) <= latest)
        .sort((a, b) => Number(b.ts) - Number(a.ts));
      return page(top, params, 100);
    },
    'users.info': (params) => {
      const id = String(params.user);
      const name = this.people.get(id);
      if (!name) throw new Error('user_not_found');
      return { user: { id, name: name.toLowerCase(), real_name: name, profile: { display_name: name, real_name: name } } };
    },
    'assistant.threads.setStatus': (params) => {
      this.statuses.push({ channel: String(params.channel_id), threadTs: String(params.thread_ts), status: String(params.status) });
      return {};
    },
    'assistant.threads.setSuggestedPrompts': () => ({}),
    'assistant.threads.setTitle': () => ({}),
    'files.info': (params) => {
      const id = String(params.file);
      const file = this.peopleFiles.get(id);
      if (!file) throw new Error('file_not_found');
      return { file: { ...fileObject(id, file), url_private_download: `${this.origin}/files/${id}` } };
    },
    'files.getUploadURLExternal': (params) => {
      // Both are required: Slack answers invalid_arguments without them.
      if (typeof params.filename !== 'string' || params.filename === '' || !(Number(params.length) > 0)) throw new Error('invalid_arguments');
      const id = `F${this.nextTs().replace('.', '')}`;
      this.uploads.set(id, { name: String(params.filename), bytes: Buffer.alloc(0) });
      return { upload_url: `${this.origin}/upload/${id}`, file_id: id };
    },
    'files.completeUploadExternal': (params) => {
      const files = params.files as { id: string; title?: string }[];
      const channel = String(params.channel_id);
      const shared = files.map((file) => ({ id: file.id, name: this.uploads.get(file.id)?.name ?? file.id, bytes: this.uploads.get(file.id)?.bytes ?? Buffer.alloc(0) }));
      const comment = String(params.initial_comment ?? '');
      const message: FakeMessage = { ts: this.nextTs(), channel, user: this.bot.userId, text: comment, buttons: [], deleted: false, files: shared, broadcasts: mentionsIn(comment), versions: [comment] };
      if (typeof params.thread_ts === 'string') message.threadTs = params.thread_ts;
      this.messages.push(message);
      return { files: files.map((file) => ({ id: file.id, title: file.title ?? '' })) };
    },
  };
}

/** The scopes the fake's bot token has: the manifest's. */
export const SCOPES = [
  'app_mentions:read', 'assistant:write', 'channels:history', 'chat:write', 'commands', 'files:read', 'files:write',
  'groups:history', 'im:history', 'im:write', 'mpim:history', 'reactions:write', 'users:read',
];

/** Each person's DM with the bot. */
export function dmOf(userId: string): string {
  return `D${userId}`;
}

/** The uploaded bytes: the body itself, or the file part of a multipart body. */
function fileBytes(raw: Buffer, contentType: string): Buffer {
  if (!contentType.startsWith('multipart/')) return raw;
  return parseRequestBody(contentType, raw, new URLSearchParams()).files[0]?.bytes ?? raw;
}

function parseParams(raw: string, contentType: string): Record<string, unknown> {
  if (contentType.includes('json')) return JSON.parse(raw || '{}') as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    // The web client sends objects and arrays as JSON strings.
    params[key] = /^[[{]/.test(value) ? safeJson(value) : value;
  }
  return params;
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

type Block = { type?: string; text?: string | { text?: string }; elements?: { text?: { text?: string }; value?: string; action_id?: string }[] };

/** A message as a person reads it: the block text when there are blocks, else the text. */
function readable(params: Record<string, unknown>): { text: string; buttons: SlackButtonSeen[]; blocks?: unknown[] } {
  const blocks = Array.isArray(params.blocks) ? (params.blocks as Block[]) : undefined;
  const fallback = typeof params.text === 'string' ? params.text : typeof params.markdown_text === 'string' ? params.markdown_text : '';
  if (!blocks) return { text: fallback, buttons: [] };
  const texts = blocks.filter((block) => block.type !== 'actions').map((block) => (typeof block.text === 'string' ? block.text : (block.text?.text ?? '')));
  const buttons = blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => block.elements ?? [])
    .map((element) => ({ label: element.text?.text ?? '', value: element.value ?? '', actionId: element.action_id ?? '' }));
  return { text: texts.join('\n'), buttons, blocks };
}

/** The broadcast mentions in mrkdwn or markdown text, as Slack parses them. */
function mentionsIn(text: string, linkNames = false): string[] {
  const found = [...text.matchAll(/<!(channel|here|everyone|subteam\^[^>|]+)(?:\|[^>]*)?>/g)].map((match) => match[1] as string);
  if (linkNames) found.push(...[...text.matchAll(/(?:^|\s)@(channel|here|everyone)\b/g)].map((match) => match[1] as string));
  return found;
}

/** What a posted or updated message would notify: its text, and every block but plain_text ones. */
function broadcastsIn(params: Record<string, unknown>): string[] {
  const blocks = Array.isArray(params.blocks) ? (params.blocks as Block[]) : [];
  const texts = [
    typeof params.text === 'string' ? params.text : '',
    ...blocks.map((block) => (typeof block.text === 'string' ? block.text : block.text && (block.text as { type?: string }).type !== 'plain_text' ? (block.text.text ?? '') : '')),
  ];
  const linkNames = params.link_names === true || params.link_names === 'true' || params.link_names === '1';
  return [...new Set(texts.flatMap((text) => mentionsIn(text, linkNames)))];
}

/** Pages as Slack's: `limit` messages, then a cursor naming the next message. */
function page<T extends { ts: string }>(all: T[], params: Record<string, unknown>, defaultLimit: number): Record<string, unknown> {
  const limit = Number(params.limit ?? defaultLimit) || defaultLimit;
  const from = typeof params.cursor === 'string' && params.cursor !== '' ? Buffer.from(params.cursor, 'base64').toString().replace(/^next_ts:/, '') : undefined;
  const start = from === undefined ? 0 : Math.max(0, all.findIndex((message) => message.ts === from));
  const next = all[start + limit];
  return {
    messages: all.slice(start, start + limit),
    has_more: next !== undefined,
    ...(next !== undefined ? { response_metadata: { next_cursor: Buffer.from(`next_ts:${next.ts}`).toString('base64') } } : {}),
  };
}

/**
 * A message's `metadata` as Slack checks it: an `event_type` of letters, digits and
 * underscores, and an `event_payload` object; anything else is `invalid_metadata_format`.
 */
function metadataOf(params: Record<string, unknown>): FakeMessage['metadata'] {
  const metadata = params.metadata;
  if (metadata === undefined) return undefined;
  const { event_type: type, event_payload: payload } = (metadata ?? {}) as { event_type?: unknown; event_payload?: unknown };
  if (typeof type !== 'string' || !/^[A-Za-z0-9_]{1,255}$/.test(type) || typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new Error('invalid_metadata_format');
  return { event_type: type, event_payload: payload as Record<string, unknown> };
}

function chunkText(params: Record<string, unknown>): string {
  const chunks = Array.isArray(params.chunks) ? (params.chunks as { type?: string; text?: string }[]) : [];
  const fromChunks = chunks.filter((chunk) => chunk.type === 'markdown_text').map((chunk) => chunk.text ?? '').join('');
  return fromChunks + (typeof params.markdown_text === 'string' ? params.markdown_text : '');
}
