import type http from 'node:http';
import { Waiters } from '../waiters.js';
import { describeFile, guessMimeType, type MediaKind } from './media.js';
import { listen, type ServerState } from './server.js';
import type {
  AnsweredCallback, FakeChat, FakeTelegramOptions, FakeUser, Fault, InboundExtra, Json, MessageEntity, RecordedCall,
  VisibleDraft, VisibleMessage,
} from './types.js';
import { UpdateFeed } from './update-feed.js';
import { WebhookPush, type WebhookDelivery } from './webhook-push.js';
import { commandsKey, FakeWorld } from './world.js';

export type * from './types.js';
export type { WebhookDelivery } from './webhook-push.js';
export { TINY_PNG } from './media.js';
export { parseTelegramHtml } from './html.js';

/**
 * A loopback Telegram Bot API for the real grammy client: `new Bot(fake.token, { client:
 * { apiRoot: fake.apiRoot } })`. Tests inject what people do (sendText, pressButton,
 * sendPhoto...) and read what people see (chat) or what the bot called (calls).
 */
export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const fake = new FakeTelegram(options);
  await fake.listen();
  return fake;
}

export class FakeTelegram {
  /** `http://127.0.0.1:PORT`, no trailing slash (grammy refuses one). */
  apiRoot = '';
  readonly token: string;
  /** Every Bot API request in arrival order, including refused ones. */
  readonly calls: RecordedCall[] = [];
  readonly answeredCallbacks: AnsweredCallback[] = [];
  /** Called on every call as it arrives, before it is answered (benchmarks time replies with it). */
  onCall: ((call: RecordedCall) => void) | undefined;
  private readonly world: FakeWorld;
  private readonly feed = new UpdateFeed();
  private readonly webhook: WebhookPush;
  private readonly faults = new Map<string, Fault[]>();
  private readonly waiters = new Waiters();
  private server: http.Server | undefined;
  private mediaGroupCounter = 0;

  constructor(options: FakeTelegramOptions) {
    const tokenId = options.token !== undefined ? Number(options.token.split(':')[0]) : NaN;
    const botId = options.botId ?? (Number.isInteger(tokenId) ? tokenId : 7_000_000_001);
    this.token = options.token ?? `${botId}:AAFakeTokenForTests_0123456789abcdefg`;
    this.world = new FakeWorld(botId, options.botUsername ?? 'hob_test_bot', options.botFirstName ?? 'hob', options.clock ?? Date.now);
    this.webhook = new WebhookPush(this.world, this.feed, () => this.changed());
    this.feed.onPush = () => this.webhook.kick();
  }

  /** @internal started by startFakeTelegram */
  async listen(): Promise<void> {
    const state: ServerState = {
      token: this.token,
      world: this.world,
      feed: this.feed,
      calls: this.calls,
      answeredCallbacks: this.answeredCallbacks,
      faults: this.faults,
      // A setWebhook (or any call) may be what pending updates waited for.
      changed: () => {
        this.changed();
        this.webhook.kick();
      },
      called: (call) => this.onCall?.(call),
    };
    const { server, apiRoot } = await listen(state);
    this.server = server;
    this.apiRoot = apiRoot;
  }

  get botUsername(): string {
    return this.world.me.username as string;
  }

  get botId(): number {
    return this.world.me.id as number;
  }

  /** Every update injected so far, with its update_id, confirmed or not. */
  get updates(): readonly Json[] {
    return this.feed.history;
  }

  /**
   * A load balancer in front of the webhook's public URL: once the bot set a webhook, updates
   * are POSTed to these local URLs in turn (webhook-push.ts). Updates wait until both exist.
   */
  balanceWebhook(targets: string[]): void {
    this.webhook.balance(targets);
  }

  /** Every webhook POST so far, in order (an update refused by one target shows twice). */
  get webhookDeliveries(): readonly WebhookDelivery[] {
    return this.webhook.deliveries;
  }

  /** True while a getUpdates request is held open waiting for updates. */
  get isPolling(): boolean {
    return this.feed.isParked();
  }

  /** The bot's messages in a chat as the person sees them now (deleted ones flagged, not removed). */
  chat(chatId: number): VisibleMessage[] {
    return this.world.visible(chatId);
  }

  /** A person writes; bot commands and @mentions get entities as Telegram would add. Returns message_id. */
  sendText(from: FakeUser, chat: FakeChat, text: string, extra: InboundExtra = {}): number {
    return this.inbound(from, chat, { text, ...entitiesField('entities', extra.entities ?? detectEntities(text)) }, extra);
  }

  sendPhoto(from: FakeUser, chat: FakeChat, bytes: Buffer, caption?: string, extra: InboundExtra = {}): number {
    return this.inboundMedia(from, chat, 'photo', this.world.storeFile('photo', bytes), caption, extra);
  }

  sendDocument(from: FakeUser, chat: FakeChat, bytes: Buffer, fileName: string, mimeType = guessMimeType(fileName), caption?: string, extra: InboundExtra = {}): number {
    return this.inboundMedia(from, chat, 'document', this.world.storeFile('document', bytes, fileName, mimeType), caption, extra);
  }

  /** A person records a voice note (Ogg/Opus); `caption` as Telegram allows on one. Returns message_id. */
  sendVoice(from: FakeUser, chat: FakeChat, bytes: Buffer, durationSeconds = 1, extra: InboundExtra = {}, caption?: string): number {
    const file = this.world.storeFile('voice', bytes, undefined, 'audio/ogg');
    return this.inbound(from, chat, { voice: describeFile('voice', file, { duration: durationSeconds }), ...this.captionFields(caption, extra) }, extra);
  }

  /** A person sends a music or audio file (Telegram's `audio`: shown with a player). Returns message_id. */
  sendAudio(from: FakeUser, chat: FakeChat, bytes: Buffer, fileName: string, durationSeconds = 1, caption?: string, extra: InboundExtra = {}): number {
    const file = this.world.storeFile('audio', bytes, fileName, guessMimeType(fileName));
    return this.inbound(from, chat, { audio: describeFile('audio', file, { duration: durationSeconds }), ...this.captionFields(caption, extra) }, extra);
  }

  /** A person records a round video message (video note: MPEG-4, no caption). Returns message_id. */
  sendVideoNote(from: FakeUser, chat: FakeChat, bytes: Buffer, durationSeconds = 1, extra: InboundExtra = {}): number {
    const file = this.world.storeFile('video_note', bytes, undefined, 'video/mp4');
    return this.inbound(from, chat, { video_note: describeFile('video_note', file, { duration: durationSeconds }) }, extra);
  }

  /**
   * A person sends an album: one message per photo, all with the same media_group_id, each its
   * own update, the caption on the first only (as Telegram delivers them). Returns the message_ids.
   */
  sendAlbum(from: FakeUser, chat: FakeChat, photos: Buffer[], caption?: string, extra: InboundExtra = {}): number[] {
    const mediaGroupId = String(13_000_000_000_000_000n + BigInt(++this.mediaGroupCounter));
    return photos.map((bytes, index) => {
      const file = this.world.storeFile('photo', bytes);
      const captionFields = index === 0 && caption ? { caption, ...entitiesField('caption_entities', extra.entities ?? detectEntities(caption)) } : {};
      return this.inbound(from, chat, { media_group_id: mediaGroupId, photo: describeFile('photo', file), ...captionFields }, extra);
    });
  }

  /** A person sends a sticker (a WebP the bot could download, which tells it nothing). Returns message_id. */
  sendSticker(from: FakeUser, chat: FakeChat, emoji = '👍', extra: InboundExtra = {}): number {
    const file = this.world.storeFile('sticker', Buffer.from('RIFF\0\0\0\0WEBPVP8 fake sticker'), undefined, 'image/webp');
    const sticker = {
      file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.bytes.length,
      type: 'regular', width: 512, height: 512, is_animated: false, is_video: false, emoji,
    };
    return this.inbound(from, chat, { sticker }, extra);
  }

  /** A person shares a location (not a live one). Returns message_id. */
  sendLocation(from: FakeUser, chat: FakeChat, latitude: number, longitude: number, extra: InboundExtra = {}): number {
    return this.inbound(from, chat, { location: { latitude, longitude } }, extra);
  }

  /**
   * A person sends a message with any other content, given as Bot API Message fields
   * (`{ contact: {...} }`, `{ poll: {...} }`, `{ dice: {...} }`). Returns message_id.
   */
  sendRaw(from: FakeUser, chat: FakeChat, content: Json, extra: InboundExtra = {}): number {
    return this.inbound(from, chat, content, extra);
  }

  /** `by` adds people to a group (by themselves: they joined): the service message a group shows. Returns message_id. */
  addMembers(by: FakeUser, chat: FakeChat, members: FakeUser[]): number {
    return this.inbound(by, chat, { new_chat_members: members.map((member) => this.userObject(member)) }, {});
  }

  /**
   * The author edits the text of a message they sent: Telegram sends an edited_message update
   * with the whole message as it is now and its edit_date (the fake's clock). Returns update_id.
   */
  editText(from: FakeUser, chat: FakeChat, messageId: number, text: string, extra: Pick<InboundExtra, 'entities'> = {}): number {
    const stored = this.world.message(chat.id, messageId);
    if (!stored || stored.author !== 'user' || (stored.message.from as Json | undefined)?.id !== from.id) {
      throw new Error(`${from.id} sent no message ${messageId} in chat ${chat.id} to edit`);
    }
    if (typeof stored.message.text !== 'string') throw new Error(`message ${messageId} in chat ${chat.id} has no text to edit`);
    const { entities: _entities, ...rest } = stored.message;
    stored.message = { ...rest, text, ...entitiesField('entities', extra.entities ?? detectEntities(text)), edit_date: this.world.unixTime() };
    stored.edits += 1;
    return this.pushUpdate({ edited_message: stored.message });
  }

  /**
   * A person presses an inline button on one of the bot's messages. Throws when that message
   * shows no button with this callback_data (a person could not press it), unless `unchecked`.
   * Returns the callback query id.
   */
  pressButton(from: FakeUser, chat: FakeChat, messageId: number, data: string, options: { unchecked?: boolean } = {}): string {
    const user = this.userObject(from);
    this.world.meetChat(chat, user);
    const stored = this.world.message(chat.id, messageId);
    const shown = stored && !stored.deleted ? buttonsOf(stored.replyMarkup) : [];
    if (!options.unchecked && !shown.includes(data)) {
      throw new Error(`message ${messageId} in chat ${chat.id} shows no button with data ${JSON.stringify(data)} (shown: ${JSON.stringify(shown)})`);
    }
    const id = this.world.newCallbackId();
    this.feed.push({
      callback_query: {
        id,
        from: user,
        ...(stored ? { message: stored.message } : {}),
        chat_instance: `ci${Math.abs(chat.id)}`,
        data,
      },
    });
    this.changed();
    return id;
  }

  /** The draft a private chat shows now (sendMessageDraft), or undefined. */
  draft(chatId: number): VisibleDraft | undefined {
    return this.world.drafts.get(chatId);
  }

  /**
   * A person presses the stop button on the draft their chat shows: Telegram hides the draft
   * (unless keep_on_stop), ignores later updates of it and sends the bot a
   * `stopped_message_generation` update. Throws when no draft with a stop button is shown.
   * Returns the update_id.
   */
  pressDraftStop(from: FakeUser, chatId: number): number {
    const draft = this.world.drafts.get(chatId);
    if (!draft?.canStop) throw new Error(`chat ${chatId} shows no draft with a stop button`);
    this.world.meetChat({ id: chatId, type: 'private' }, this.userObject(from));
    this.world.stoppedDrafts.add(`${chatId}:${draft.draftId}`);
    if (!draft.keepOnStop) this.world.drafts.delete(chatId);
    return this.pushUpdate({
      stopped_message_generation: {
        chat: this.world.chatObject(chatId),
        ...(draft.threadId !== undefined ? { message_thread_id: draft.threadId } : {}),
        draft_id: draft.draftId,
      },
    });
  }

  /** Any other update (edited_message, my_chat_member...); returns its update_id. */
  pushUpdate(update: Json): number {
    const id = this.feed.push(update);
    this.changed();
    return id;
  }

  /** The command list set for exactly this scope (default: the default scope), as getMyCommands would return it. */
  commandsFor(scope: Json = { type: 'default' }, languageCode = ''): Json[] {
    return this.world.commands.get(commandsKey(scope, languageCode)) ?? [];
  }

  /**
   * The command menu a person sees in a chat: the narrowest scope that has a list, in
   * Telegram's order (private: chat, all_private_chats, default; group: chat_member, chat,
   * all_group_chats, default). Language-specific lists and administrator scopes are not modelled.
   */
  commandMenu(chatId: number, userId?: number): Json[] {
    const group = this.world.knows(chatId) ? this.world.chatObject(chatId).type !== 'private' : chatId < 0;
    const scopes: Json[] = group
      ? [
          ...(userId !== undefined ? [{ type: 'chat_member', chat_id: chatId, user_id: userId }] : []),
          { type: 'chat', chat_id: chatId },
          { type: 'all_group_chats' },
          { type: 'default' },
        ]
      : [{ type: 'chat', chat_id: chatId }, { type: 'all_private_chats' }, { type: 'default' }];
    for (const scope of scopes) {
      const commands = this.world.commands.get(commandsKey(scope));
      if (commands) return commands;
    }
    return [];
  }

  /** The next call of `method` fails with `fault`; several faults queue up in order. */
  failNext(method: string, fault: Fault): void {
    const key = method.toLowerCase();
    this.faults.set(key, [...(this.faults.get(key) ?? []), fault]);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method.toLowerCase() === method.toLowerCase());
  }

  /**
   * Resolves with the first call of `method` (matching `predicate`) once the fake has applied it;
   * past calls count. A parked getUpdates resolves while it is still held open.
   */
  waitForCall(method: string, predicate: (call: RecordedCall) => boolean = () => true, timeoutMs = 5000): Promise<RecordedCall> {
    return this.waitFor(
      () => this.callsOf(method).find((call) => (call.response !== undefined || this.isParkedCall(call)) && predicate(call)),
      timeoutMs,
      `a ${method} call`,
    );
  }

  /** Resolves with the first truthy value of `probe`, re-checked on every change and every 10 ms. */
  waitFor<T>(probe: () => T | undefined | null | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    return this.waiters.waitFor(probe, timeoutMs, () => `fake Telegram: timed out after ${timeoutMs} ms waiting for ${what}; last calls: ${this.describeRecentCalls()}`);
  }

  /** Answers a held long poll, stops listening and drops keep-alive sockets. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.feed.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private inbound(from: FakeUser, chat: FakeChat, content: Json, extra: InboundExtra): number {
    const user = this.userObject(from);
    this.world.meetChat(chat, user);
    const replyTo = extra.reply_to_message ?? this.replyTarget(chat.id, extra.reply_to_message_id);
    const stored = this.world.addMessage(
      chat.id,
      { author: 'user', kind: 'text', sentText: '', visibleText: '', entities: [] },
      {
        from: user,
        ...(extra.message_thread_id !== undefined ? { message_thread_id: extra.message_thread_id } : {}),
        ...(extra.is_topic_message !== undefined ? { is_topic_message: extra.is_topic_message } : {}),
        ...(replyTo ? { reply_to_message: replyTo } : {}),
        ...content,
      },
    );
    this.feed.push({ message: stored.message });
    this.changed();
    return stored.message.message_id as number;
  }

  private inboundMedia(from: FakeUser, chat: FakeChat, kind: MediaKind, file: ReturnType<FakeWorld['storeFile']>, caption: string | undefined, extra: InboundExtra): number {
    return this.inbound(from, chat, { [kind]: describeFile(kind, file), ...this.captionFields(caption, extra) }, extra);
  }

  private captionFields(caption: string | undefined, extra: InboundExtra): Json {
    return caption ? { caption, ...entitiesField('caption_entities', extra.entities ?? detectEntities(caption)) } : {};
  }

  private replyTarget(chatId: number, messageId: number | undefined): Json | undefined {
    if (messageId === undefined) return undefined;
    const target = this.world.message(chatId, messageId);
    if (!target) throw new Error(`no message ${messageId} in chat ${chatId} to reply to`);
    const { reply_to_message: _nested, ...message } = target.message;
    return message;
  }

  private userObject(from: FakeUser): Json {
    return { id: from.id, is_bot: false, first_name: from.first_name ?? 'User', ...withoutUndefined({ last_name: from.last_name, username: from.username, language_code: from.language_code }) };
  }

  private isParkedCall(call: RecordedCall): boolean {
    return call.method.toLowerCase() === 'getupdates' && call.response === undefined && call === this.callsOf('getUpdates').at(-1) && this.feed.isParked();
  }

  private changed(): void {
    this.waiters.changed();
  }

  private describeRecentCalls(): string {
    return this.calls.slice(-8).map((call) => `${call.method}→${call.response?.status ?? 'pending'}${call.response?.description ? ` (${call.response.description})` : ''}`).join(', ') || 'none';
  }
}

/** Bot commands at a word start and @usernames, the entities Telegram adds to people's messages. */
function detectEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  for (const match of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)(?=\s|$)/g)) {
    entities.push({ type: 'bot_command', offset: match.index + (match[1]?.length ?? 0), length: match[2]?.length ?? 0 });
  }
  for (const match of text.matchAll(/(^|[^\w/])(@[A-Za-z0-9_]{5,32})(?![\w])/g)) {
    entities.push({ type: 'mention', offset: match.index + (match[1]?.length ?? 0), length: match[2]?.length ?? 0 });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

function entitiesField(name: string, entities: MessageEntity[]): Json {
  return entities.length > 0 ? { [name]: entities } : {};
}

function buttonsOf(markup: Json | undefined): string[] {
  const rows = markup?.inline_keyboard;
  if (!Array.isArray(rows)) return [];
  return rows.flatMap((row: unknown) => (Array.isArray(row) ? row : [])).flatMap((button: unknown) => {
    const data = (button as Json).callback_data;
    return typeof data === 'string' ? [data] : [];
  });
}

function withoutUndefined(fields: Record<string, string | undefined>): Json {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
