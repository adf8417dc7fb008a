/** A JSON object as it travels on the Bot API wire. */
export type Json = Record<string, unknown>;

/** A file part of a multipart/form-data request. */
export interface UploadedFile {
  /** The part name: the random id grammy puts behind `attach://`, or the parameter name itself. */
  field: string;
  fileName: string;
  contentType: string;
  size: number;
  bytes: Buffer;
}

/** What the fake answered; `status` is the HTTP status. */
export interface ApiResponse {
  status: number;
  ok: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: Json;
}

/** One Bot API request as the fake received it. */
export interface RecordedCall {
  seq: number;
  /** As written in the URL path (Telegram itself matches method names case-insensitively). */
  method: string;
  /** Parsed JSON body; for multipart or urlencoded requests the fields exactly as sent (strings). */
  body: Json;
  /** File parts of a multipart request (empty for JSON requests). */
  files: UploadedFile[];
  /** Clock milliseconds when the request arrived. */
  at: number;
  /** Set once answered; a getUpdates call parked for long polling has none yet. */
  response?: ApiResponse;
}

/**
 * One injected failure, consumed by the next call of its method.
 * `retryAfter` → 429 "Too Many Requests: retry after N" with parameters.retry_after;
 * `code` + `description` → that error verbatim; `disconnect` → the socket is destroyed
 * without an answer (grammy reports an HttpError).
 */
export type Fault =
  /** This call goes through normally (queue it before a fault to hit a later call). */
  | { pass: true }
  | { retryAfter: number }
  | { code: number; description: string; parameters?: Json }
  | { disconnect: true };

export interface FakeUser {
  id: number;
  first_name?: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

export interface FakeChat {
  id: number;
  type: 'private' | 'group' | 'supergroup';
  title?: string;
  username?: string;
  is_forum?: boolean;
}

export interface MessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

/** Extra fields for an injected user message. */
export interface InboundExtra {
  message_thread_id?: number;
  is_topic_message?: boolean;
  /** The fake embeds its stored copy of this message as `reply_to_message`. */
  reply_to_message_id?: number;
  /** A raw `reply_to_message` object; wins over `reply_to_message_id`. */
  reply_to_message?: Json;
  /** Given entities replace the ones the fake detects itself (bot commands and @mentions). */
  entities?: MessageEntity[];
}

export type MessageKind = 'text' | 'photo' | 'document' | 'voice' | 'audio' | 'video' | 'animation' | 'video_note';

/** A file the fake holds: injected by a user or uploaded by the bot. */
export interface StoredFile {
  fileId: string;
  fileUniqueId: string;
  filePath: string;
  bytes: Buffer;
  fileName?: string;
  mimeType?: string;
}

/** A message the bot sent, as the person in the chat sees it now. */
export interface VisibleMessage {
  messageId: number;
  chatId: number;
  threadId?: number;
  kind: MessageKind;
  /** What a person reads: the text (or caption) after markup parsing and after edits. */
  text: string;
  /** The text or caption as the bot last sent it (HTML source when parse_mode was HTML). */
  sentText: string;
  parseMode?: string;
  entities: MessageEntity[];
  /** The inline keyboard currently attached (undefined once an edit drops it). */
  replyMarkup?: Json;
  replyToMessageId?: number;
  file?: StoredFile;
  edits: number;
  deleted: boolean;
}

/** A draft the bot streams into a private chat (sendMessageDraft), as the person sees it now. */
export interface VisibleDraft {
  draftId: number;
  threadId?: number;
  /** What a person reads, after markup parsing. */
  text: string;
  /** As the bot sent it (HTML source when parse_mode was HTML). */
  sentText: string;
  parseMode?: string;
  /** The native stop button is shown. */
  canStop: boolean;
  keepOnStop: boolean;
}

export interface AnsweredCallback {
  id: string;
  text?: string;
  show_alert?: boolean;
  url?: string;
  cache_time?: number;
}

export interface FakeTelegramOptions {
  /** Defaults to `<botId>:AAFakeTokenForTests`; a given token's numeric prefix becomes the bot id. */
  token?: string;
  botUsername?: string;
  botId?: number;
  botFirstName?: string;
  /** Milliseconds; message dates and `RecordedCall.at` come from it. */
  clock?: () => number;
}
