import { parseTelegramHtml } from './html.js';
import type { Json, MessageEntity } from './types.js';
import type { FakeWorld } from './world.js';

/** A refusal the Bot API would send: `{"ok":false,"error_code":code,"description":...}`. */
export class BotApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: Json,
  ) {
    super(description);
  }
}

export const badRequest = (description: string): BotApiError => new BotApiError(400, `Bad Request: ${description}`);

/**
 * Typed access to method parameters. JSON bodies carry real numbers and objects; multipart and
 * urlencoded bodies carry strings (objects JSON-encoded), and Telegram accepts both forms.
 */
export class Params {
  constructor(readonly raw: Json) {}

  has(name: string): boolean {
    return this.raw[name] !== undefined && this.raw[name] !== null;
  }

  string(name: string): string | undefined {
    const value = this.raw[name];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : String(value);
  }

  integer(name: string): number | undefined {
    const value = this.raw[name];
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
    if (value === undefined || value === null) return undefined;
    throw badRequest(`invalid ${name} specified`);
  }

  boolean(name: string): boolean {
    const value = this.raw[name];
    return value === true || value === 'true' || value === 1 || value === '1';
  }

  json(name: string): unknown {
    const value = this.raw[name];
    if (typeof value !== 'string') return value ?? undefined;
    try {
      return JSON.parse(value);
    } catch {
      throw badRequest(`can't parse ${name} JSON object`);
    }
  }

  chatId(): number {
    const value = this.raw.chat_id;
    if (value === undefined || value === null || value === '') throw badRequest('chat_id is empty');
    const id = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
    // Channel usernames (@name) and anything else the fake never met.
    if (!Number.isInteger(id)) throw badRequest('chat not found');
    return id;
  }

  messageId(): number {
    const id = this.integer('message_id');
    if (id === undefined) throw badRequest('message identifier is not specified');
    return id;
  }
}

/**
 * The message a send answers (reply_parameters, or the older reply_to_message_id), as embedded
 * in the sent message's `reply_to_message`. A missing target is refused unless the bot allowed
 * sending without the reply.
 */
export function readReplyTarget(world: FakeWorld, chatId: number, params: Params): Json | undefined {
  const parameters = params.json('reply_parameters') as Json | undefined;
  const id = typeof parameters?.message_id === 'number' ? parameters.message_id : params.integer('reply_to_message_id');
  if (id === undefined) return undefined;
  const target = world.message(chatId, id);
  if (!target || target.deleted) {
    if (parameters?.allow_sending_without_reply === true) return undefined;
    throw badRequest('message to be replied not found');
  }
  const { reply_to_message: _nested, ...message } = target.message;
  return message;
}

/** Text after parse_mode: what the person reads, plus the entities Telegram derived. */
export interface FormattedText {
  text: string;
  entities: MessageEntity[];
}

/** Applies parse_mode the way Telegram does; only HTML is parsed, other modes pass through. */
export function formatText(source: string, parseMode: string | undefined, entities: unknown): FormattedText {
  if (parseMode?.toLowerCase() === 'html') {
    const parsed = parseTelegramHtml(source);
    if (!parsed.ok) throw badRequest(`can't parse entities: ${parsed.error}`);
    return { text: parsed.text, entities: parsed.entities };
  }
  const given = Array.isArray(entities) ? (entities as MessageEntity[]) : [];
  return { text: source, entities: given };
}

const actionFields = [
  'url', 'callback_data', 'web_app', 'login_url', 'switch_inline_query', 'switch_inline_query_current_chat',
  'switch_inline_query_chosen_chat', 'copy_text', 'callback_game', 'pay',
];

/** Validates reply_markup like Telegram and returns the inline keyboard to echo, if any. */
export function readReplyMarkup(params: Params): Json | undefined {
  const markup = params.json('reply_markup');
  if (markup === undefined) return undefined;
  if (typeof markup !== 'object' || markup === null || Array.isArray(markup)) {
    throw badRequest('object expected as reply markup');
  }
  const keyboard = (markup as Json).inline_keyboard;
  if (keyboard === undefined) return undefined; // reply keyboards are accepted but never echoed
  const rowsError = 'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays';
  if (!Array.isArray(keyboard)) throw badRequest(rowsError);
  for (const row of keyboard) {
    if (!Array.isArray(row)) throw badRequest(rowsError);
    for (const button of row) {
      if (typeof button !== 'object' || button === null) throw badRequest("can't parse inline keyboard button: InlineKeyboardButton must be an Object");
      const fields = button as Json;
      if (typeof fields.text !== 'string') throw badRequest(`can't parse inline keyboard button: Field "text" must be of type String`);
      if (fields.callback_data !== undefined) {
        const data = fields.callback_data;
        if (typeof data !== 'string' || Buffer.byteLength(data) === 0 || Buffer.byteLength(data) > 64) {
          throw badRequest('BUTTON_DATA_INVALID');
        }
      }
      if (fields.url !== undefined && (typeof fields.url !== 'string' || !URL.canParse(fields.url))) {
        throw badRequest('BUTTON_URL_INVALID');
      }
      if (!actionFields.some((field) => fields[field] !== undefined)) {
        throw badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard");
      }
    }
  }
  // Telegram does not echo an empty inline keyboard.
  return keyboard.some((row) => Array.isArray(row) && row.length > 0) ? (markup as Json) : undefined;
}
