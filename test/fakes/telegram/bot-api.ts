import { getFile, sendMedia } from './media.js';
import { badRequest, formatText, readReplyMarkup, readReplyTarget, type FormattedText, type Params } from './params.js';
import type { AnsweredCallback, Json, UploadedFile } from './types.js';
import type { UpdateFeed } from './update-feed.js';
import { commandsKey, type FakeWorld } from './world.js';

export interface MethodContext {
  world: FakeWorld;
  feed: UpdateFeed;
  params: Params;
  files: UploadedFile[];
  answeredCallbacks: AnsweredCallback[];
}

type Method = (context: MethodContext) => unknown;

const chatActions = new Set([
  'typing', 'upload_photo', 'record_video', 'upload_video', 'record_voice', 'upload_voice',
  'upload_document', 'choose_sticker', 'find_location', 'record_video_note', 'upload_video_note',
]);

const notModified =
  'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';

/** Bot API methods other than getUpdates, keyed by lower-case name (Telegram ignores case). */
export const botApiMethods: Record<string, Method> = {
  getme: ({ world }) => ({
    ...world.me,
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  }),

  setwebhook: ({ world, feed, params }) => {
    const url = params.string('url') ?? '';
    if (url !== '' && !/^https:\/\//i.test(url)) throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
    if (params.boolean('drop_pending_updates')) feed.dropPending();
    feed.allow(params.json('allowed_updates'));
    world.webhookUrl = url;
    world.webhookSecret = url === '' ? '' : (params.string('secret_token') ?? '');
    return true;
  },
  deletewebhook: ({ world, feed, params }) => {
    if (params.boolean('drop_pending_updates')) feed.dropPending();
    world.webhookUrl = '';
    world.webhookSecret = '';
    return true;
  },
  getwebhookinfo: ({ world }) => ({ url: world.webhookUrl, has_custom_certificate: false, pending_update_count: 0 }),

  setmycommands: ({ world, params }) => {
    const commands = params.json('commands');
    if (!Array.isArray(commands)) throw badRequest('parameter "commands" is required');
    if (commands.length > 100) throw badRequest('BOT_COMMANDS_TOO_MUCH');
    for (const command of commands as Json[]) {
      if (typeof command.command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(command.command)) throw badRequest('BOT_COMMAND_INVALID');
      if (typeof command.description !== 'string' || command.description.length < 1 || command.description.length > 256) {
        throw badRequest('command description must be non-empty');
      }
    }
    // An empty list clears the scope, so the next wider scope shows again.
    const key = commandsKeyOf(world, params);
    if (commands.length === 0) world.commands.delete(key);
    else world.commands.set(key, commands as Json[]);
    return true;
  },
  getmycommands: ({ world, params }) => world.commands.get(commandsKeyOf(world, params)) ?? [],
  deletemycommands: ({ world, params }) => world.commands.delete(commandsKeyOf(world, params)) || true,

  sendchataction: ({ params }) => {
    params.chatId();
    if (!chatActions.has(params.string('action') ?? '')) throw badRequest('wrong parameter action in request');
    return true;
  },

  sendmessage: ({ world, params }) => {
    const chatId = params.chatId();
    const source = params.string('text') ?? '';
    const parseMode = params.string('parse_mode');
    const formatted = formatText(source, parseMode, params.json('entities'));
    if (formatted.text.trim() === '') throw badRequest('message text is empty');
    if (formatted.text.length > 4096) throw badRequest('message is too long');
    const replyMarkup = readReplyMarkup(params);
    const threadId = params.integer('message_thread_id');
    const replyTo = readReplyTarget(world, chatId, params);
    const stored = world.addMessage(
      chatId,
      {
        author: 'bot',
        kind: 'text',
        sentText: source,
        ...(parseMode !== undefined ? { parseMode } : {}),
        visibleText: formatted.text,
        entities: formatted.entities,
        ...(replyMarkup !== undefined ? { replyMarkup } : {}),
      },
      {
        ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
        ...(replyTo ? { reply_to_message: replyTo } : {}),
        text: formatted.text,
        ...(formatted.entities.length > 0 ? { entities: formatted.entities } : {}),
        ...(replyMarkup !== undefined ? { reply_markup: replyMarkup } : {}),
      },
    );
    return stored.message;
  },

  sendmessagedraft: ({ world, params }) => {
    const chatId = params.chatId();
    if (chatId <= 0) throw badRequest('TEXTDRAFT_PEER_INVALID');
    const draftId = params.integer('draft_id');
    if (draftId === undefined || draftId === 0) throw badRequest('DRAFT_ID_INVALID');
    const source = params.string('text') ?? '';
    const parseMode = params.string('parse_mode');
    const formatted = formatText(source, parseMode, params.json('entities'));
    if (formatted.text.length > 4096) throw badRequest('TEXT_TOO_LONG');
    // A draft the person stopped stays stopped: later updates of it show nothing.
    if (world.stoppedDrafts.has(`${chatId}:${draftId}`)) return true;
    const threadId = params.integer('message_thread_id');
    world.drafts.set(chatId, {
      draftId,
      ...(threadId !== undefined ? { threadId } : {}),
      text: formatted.text,
      sentText: source,
      ...(parseMode !== undefined ? { parseMode } : {}),
      canStop: params.boolean('can_stop'),
      keepOnStop: params.boolean('keep_on_stop'),
    });
    return true;
  },

  editmessagetext: ({ world, params }) => {
    const stored = editable(world, params);
    if (stored.kind !== 'text') throw badRequest('there is no text in the message to edit');
    const source = params.string('text') ?? '';
    const formatted = formatText(source, params.string('parse_mode'), params.json('entities'));
    if (formatted.text.trim() === '') throw badRequest('message text is empty');
    if (formatted.text.length > 4096) throw badRequest('MESSAGE_TOO_LONG');
    return editShown(world, stored, params, source, formatted, 'text');
  },

  editmessagecaption: ({ world, params }) => {
    const stored = editable(world, params);
    if (stored.kind === 'text') throw badRequest('there is no caption in the message to edit');
    const source = params.string('caption') ?? '';
    const formatted = formatText(source, params.string('parse_mode'), params.json('caption_entities'));
    if (formatted.text.length > 1024) throw badRequest('message caption is too long');
    return editShown(world, stored, params, source, formatted, 'caption');
  },

  editmessagereplymarkup: ({ world, params }) => {
    const stored = editable(world, params);
    const replyMarkup = readReplyMarkup(params);
    if (JSON.stringify(replyMarkup) === JSON.stringify(stored.replyMarkup)) throw badRequest(notModified);
    const { reply_markup: _markup, ...rest } = stored.message;
    stored.message = rest;
    return applyEdit(world, stored, replyMarkup);
  },

  deletemessage: ({ world, params }) => {
    const chatId = params.chatId();
    const stored = world.message(chatId, params.messageId());
    if (!stored || stored.deleted) throw badRequest('message to delete not found');
    stored.deleted = true;
    return true;
  },

  answercallbackquery: ({ world, params, answeredCallbacks }) => {
    const id = params.string('callback_query_id') ?? '';
    // Unknown and already-answered queries get the same refusal on Telegram.
    if (!world.pendingCallbacks.delete(id)) {
      throw badRequest('query is too old and response timeout expired or query ID is invalid');
    }
    const text = params.string('text');
    const url = params.string('url');
    const cacheTime = params.integer('cache_time');
    if (text !== undefined && text.length > 200) throw badRequest('MESSAGE_TOO_LONG');
    answeredCallbacks.push({
      id,
      ...(text !== undefined ? { text } : {}),
      ...(params.has('show_alert') ? { show_alert: params.boolean('show_alert') } : {}),
      ...(url !== undefined ? { url } : {}),
      ...(cacheTime !== undefined ? { cache_time: cacheTime } : {}),
    });
    return true;
  },

  senddocument: ({ world, params, files }) => sendMedia(world, 'document', params, files),
  sendphoto: ({ world, params, files }) => sendMedia(world, 'photo', params, files),
  sendvoice: ({ world, params, files }) => sendMedia(world, 'voice', params, files),
  sendaudio: ({ world, params, files }) => sendMedia(world, 'audio', params, files),
  sendvideo: ({ world, params, files }) => sendMedia(world, 'video', params, files),
  sendanimation: ({ world, params, files }) => sendMedia(world, 'animation', params, files),
  getfile: ({ world, params }) => getFile(world, params),
};

const scopeTypes = new Set([
  'default', 'all_private_chats', 'all_group_chats', 'all_chat_administrators', 'chat', 'chat_administrators', 'chat_member',
]);

/**
 * The scope and language a *MyCommands call names. A chat scope needs a chat Telegram knows:
 * an owner who never opened a DM with the bot gets "chat not found", as on Telegram.
 */
function commandsKeyOf(world: FakeWorld, params: Params): string {
  const scope = params.json('scope') ?? { type: 'default' };
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) throw badRequest("can't parse BotCommandScope JSON object");
  const fields = scope as Json;
  if (typeof fields.type !== 'string' || !scopeTypes.has(fields.type)) throw badRequest('unsupported bot command scope type');
  const canonical: Json = { type: fields.type };
  if (fields.type.startsWith('chat')) {
    const chatId = typeof fields.chat_id === 'number' ? fields.chat_id : typeof fields.chat_id === 'string' && /^-?\d+$/.test(fields.chat_id) ? Number(fields.chat_id) : undefined;
    if (chatId === undefined || !world.knows(chatId)) throw badRequest('chat not found');
    canonical.chat_id = chatId;
  }
  if (fields.type === 'chat_member') {
    if (typeof fields.user_id !== 'number') throw badRequest('invalid user_id specified');
    canonical.user_id = fields.user_id;
  }
  return commandsKey(canonical, params.string('language_code') ?? '');
}

function editable(world: FakeWorld, params: Params) {
  if (params.has('inline_message_id')) throw badRequest('MESSAGE_ID_INVALID');
  const chatId = params.chatId();
  const stored = world.message(chatId, params.messageId());
  if (!stored || stored.deleted) throw badRequest('message to edit not found');
  if (stored.author !== 'bot') throw badRequest("message can't be edited");
  return stored;
}

/**
 * The common part of editing what a message shows (its text, or a file's caption): refuses an
 * edit that changes nothing, as Telegram does, then stores the new text, entities and keyboard.
 */
function editShown(
  world: FakeWorld,
  stored: ReturnType<typeof editable>,
  params: Params,
  source: string,
  formatted: FormattedText,
  place: 'text' | 'caption',
): Json {
  // Omitting reply_markup in an edit removes the keyboard, as on Telegram.
  const replyMarkup = readReplyMarkup(params);
  const unchanged =
    formatted.text === stored.visibleText &&
    JSON.stringify(formatted.entities) === JSON.stringify(stored.entities) &&
    JSON.stringify(replyMarkup) === JSON.stringify(stored.replyMarkup);
  if (unchanged) throw badRequest(notModified);
  const parseMode = params.string('parse_mode');
  stored.sentText = source;
  if (parseMode !== undefined) stored.parseMode = parseMode;
  else delete stored.parseMode;
  stored.visibleText = formatted.text;
  stored.entities = formatted.entities;
  const entitiesKey = place === 'text' ? 'entities' : 'caption_entities';
  const { [place]: _shown, [entitiesKey]: _entities, reply_markup: _markup, ...rest } = stored.message;
  stored.message = {
    ...rest,
    ...(place === 'text' || formatted.text !== '' ? { [place]: formatted.text } : {}),
    ...(formatted.entities.length > 0 ? { [entitiesKey]: formatted.entities } : {}),
  };
  return applyEdit(world, stored, replyMarkup);
}

function applyEdit(world: FakeWorld, stored: ReturnType<typeof editable>, replyMarkup: Json | undefined): Json {
  if (replyMarkup !== undefined) stored.replyMarkup = replyMarkup;
  else delete stored.replyMarkup;
  stored.edits += 1;
  stored.message = {
    ...stored.message,
    edit_date: world.unixTime(),
    ...(replyMarkup !== undefined ? { reply_markup: replyMarkup } : {}),
  };
  return stored.message;
}
