import type { FakeChat, Json, MessageEntity, MessageKind, StoredFile, VisibleDraft, VisibleMessage } from './types.js';

/** One message in a chat as the fake remembers it; `message` is the Bot API object as it is now. */
export interface StoredMessage {
  message: Json;
  author: 'bot' | 'user';
  kind: MessageKind;
  /** For bot messages: the text or caption as last sent, before parse_mode. */
  sentText: string;
  parseMode?: string;
  visibleText: string;
  entities: MessageEntity[];
  replyMarkup?: Json;
  file?: StoredFile;
  edits: number;
  deleted: boolean;
}

interface ChatState {
  chat: Json;
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
}

const extensions: Record<string, string> = {
  sticker: 'webp', photo: 'jpg', voice: 'oga', audio: 'mp3', video: 'mp4', animation: 'mp4', document: 'dat', video_note: 'mp4',
};
const folders: Record<string, string> = {
  sticker: 'stickers', photo: 'photos', voice: 'voice', audio: 'music', video: 'videos', animation: 'animations', document: 'documents', video_note: 'video_notes',
};

/** Everything Telegram's side knows: the bot, chats and their messages, files, callbacks. */
export class FakeWorld {
  readonly me: Json;
  readonly files = new Map<string, StoredFile>();
  /** Callback query ids the bot has not answered yet. */
  readonly pendingCallbacks = new Set<string>();
  /** Command lists by `commandsKey(scope, language_code)`. */
  readonly commands = new Map<string, Json[]>();
  webhookUrl = '';
  /** The secret_token setWebhook chose: sent back on every webhook POST. */
  webhookSecret = '';
  /** The draft each private chat shows now; it goes when the bot sends a message there. */
  readonly drafts = new Map<number, VisibleDraft>();
  /** `chat:draft` ids whose stop button was pressed: later updates of them show nothing. */
  readonly stoppedDrafts = new Set<string>();
  private readonly chats = new Map<number, ChatState>();
  private fileCounter = 0;
  private callbackCounter = 0;

  constructor(
    botId: number,
    botUsername: string,
    botFirstName: string,
    readonly now: () => number,
  ) {
    this.me = { id: botId, is_bot: true, first_name: botFirstName, username: botUsername };
  }

  unixTime(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Records how a person's chat looks, so later messages carry the same chat object. */
  meetChat(chat: FakeChat, user?: Json): Json {
    const object: Json =
      chat.type === 'private'
        ? { id: chat.id, type: 'private', first_name: user?.first_name ?? 'User', ...(user?.username ? { username: user.username } : {}) }
        : { id: chat.id, type: chat.type, title: chat.title ?? 'Group', ...(chat.is_forum ? { is_forum: true } : {}) };
    this.state(chat.id).chat = object;
    return object;
  }

  chatObject(chatId: number): Json {
    return this.state(chatId).chat;
  }

  /** True once the chat exists for Telegram's side: a person wrote there or the bot sent there. */
  knows(chatId: number): boolean {
    return this.chats.has(chatId);
  }

  /** Stores a new message with the next id of its chat and returns it. */
  addMessage(chatId: number, fields: Omit<StoredMessage, 'message' | 'edits' | 'deleted'>, content: Json): StoredMessage {
    const state = this.state(chatId);
    const messageId = state.nextMessageId++;
    const from = fields.author === 'bot' ? this.me : content.from;
    const message: Json = { message_id: messageId, from, chat: state.chat, date: this.unixTime(), ...content };
    const stored: StoredMessage = { ...fields, message, edits: 0, deleted: false };
    state.messages.set(messageId, stored);
    // Telegram replaces a draft by the bot's next message in the chat.
    if (fields.author === 'bot') this.drafts.delete(chatId);
    return stored;
  }

  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.chats.get(chatId)?.messages.get(messageId);
  }

  storeFile(kind: MessageKind | 'sticker', bytes: Buffer, fileName?: string, mimeType?: string): StoredFile {
    const n = ++this.fileCounter;
    const extension = kind === 'document' && fileName?.includes('.') ? fileName.split('.').pop() : extensions[kind];
    const file: StoredFile = {
      fileId: `fake-${kind}-${n}`,
      fileUniqueId: `uniq${n}`,
      filePath: `${folders[kind] ?? 'documents'}/file_${n}.${extension ?? 'dat'}`,
      bytes,
      ...(fileName !== undefined ? { fileName } : {}),
      ...(mimeType !== undefined ? { mimeType } : {}),
    };
    this.files.set(file.fileId, file);
    return file;
  }

  newCallbackId(): string {
    const id = `${this.me.id}${String(++this.callbackCounter).padStart(6, '0')}`;
    this.pendingCallbacks.add(id);
    return id;
  }

  /** The bot's messages in a chat, as a person sees them. */
  visible(chatId: number): VisibleMessage[] {
    const messages = [...(this.chats.get(chatId)?.messages.values() ?? [])];
    return messages
      .filter((stored) => stored.author === 'bot')
      .map((stored) => {
        const threadId = stored.message.message_thread_id;
        const replyTo = (stored.message.reply_to_message as Json | undefined)?.message_id;
        return {
          messageId: stored.message.message_id as number,
          chatId,
          ...(typeof threadId === 'number' ? { threadId } : {}),
          kind: stored.kind,
          text: stored.visibleText,
          sentText: stored.sentText,
          ...(stored.parseMode !== undefined ? { parseMode: stored.parseMode } : {}),
          entities: stored.entities,
          ...(stored.replyMarkup !== undefined ? { replyMarkup: stored.replyMarkup } : {}),
          ...(typeof replyTo === 'number' ? { replyToMessageId: replyTo } : {}),
          ...(stored.file !== undefined ? { file: stored.file } : {}),
          edits: stored.edits,
          deleted: stored.deleted,
        };
      });
  }

  private state(chatId: number): ChatState {
    let state = this.chats.get(chatId);
    if (!state) {
      // A chat the bot is told about only by id: shaped from the id as Telegram numbers them.
      const chat: Json =
        chatId > 0
          ? { id: chatId, type: 'private', first_name: 'User' }
          : chatId < -1_000_000_000_000
            ? { id: chatId, type: 'supergroup', title: 'Supergroup' }
            : { id: chatId, type: 'group', title: 'Group' };
      state = { chat, nextMessageId: 1, messages: new Map() };
      this.chats.set(chatId, state);
    }
    return state;
  }
}

/**
 * The key of one command list: the scope's own fields in a fixed order (so `{chat_id, type}`
 * and `{type, chat_id}` are one scope, as on Telegram) plus the language code.
 */
export function commandsKey(scope: Json, languageCode = ''): string {
  const canonical = { type: scope.type, ...(scope.chat_id !== undefined ? { chat_id: scope.chat_id } : {}), ...(scope.user_id !== undefined ? { user_id: scope.user_id } : {}) };
  return `${JSON.stringify(canonical)}|${languageCode}`;
}
