import type {
  BotCommand,
  Button,
  ButtonPress,
  ChannelAdapter,
  ChannelCapabilities,
  ChatType,
  InboundMessage,
  InboundSink,
  LiveAnswer,
  LiveAnswerOptions,
  OutboundMessage,
  SentRef,
  Target,
} from '../../src/gateway/channel.js';

/** A message as the person sees it: current text after edits, current buttons. */
export type SeenMessage = {
  id: string;
  chatId: string;
  threadId?: string;
  text: string;
  buttons: Button[];
  file?: { name: string; size: number };
  edits: number;
  /** The message this one answers (a reply). */
  replyTo?: string;
};

export type Person = { id: string; name: string };

/** Update ids grow across channel instances, as a platform's do across restarts. */
let nextUpdate = 1;

/**
 * An in-memory chat platform implementing ChannelAdapter: tests speak as people, press
 * buttons and read what each chat shows. No network; shared by the gateway tests, the
 * contract suite and the benchmarks.
 */
export class MemoryChannel implements ChannelAdapter {
  readonly platform = 'memory';
  readonly botName = 'hob';
  readonly capabilities: ChannelCapabilities;
  readonly chats = new Map<string, SeenMessage[]>();
  readonly answers: { userId: string; text?: string }[] = [];
  readonly typingChats: string[] = [];
  private sink: InboundSink | undefined;
  private nextId = 1;
  private readonly listeners = new Set<() => void>();
  /** Files people "uploaded", by ref: what `download(ref)` serves after a restart. */
  readonly files = new Map<string, Buffer>();
  /** Called on every send; tests use it to time replies or inject failures. */
  onSend: ((target: Target, message: OutboundMessage) => void) | undefined;

  /** Draft streaming: what each chat's draft preview shows now (gone once finished or cancelled). */
  readonly drafts = new Map<string, string>();
  /** Everything live answers did, in order. */
  readonly liveLog: { chatId: string; event: 'update' | 'finish' | 'cancel'; text: string }[] = [];
  /** Why the channel does not serve now (as a platform that refused it for good); /healthz reports it. */
  down: string | undefined;
  /** Live answers end without becoming the answer (as when a platform refuses to finish a stream). */
  refuseLiveFinish = false;
  /** Awaited by a streamed message's finish after its last edit (tests stop "the process" there). */
  beforeLiveFinish: ((text: string) => Promise<void>) | undefined;
  /** The command menus hob set last: everyone's, and the owners' (as a platform with per-person menus keeps them). */
  menus: { everyone: BotCommand[]; owners?: { userIds: string[]; commands: BotCommand[] } } | undefined;

  constructor(capabilities: Partial<ChannelCapabilities> = {}) {
    this.capabilities = { maxMessageLength: 4096, buttons: true, edits: true, files: true, editIntervalMs: 0, ...capabilities };
  }

  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
  }

  async stop(): Promise<void> {
    this.sink = undefined;
  }

  async setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    this.menus = { everyone, owners };
  }

  async send(target: Target, message: OutboundMessage): Promise<SentRef> {
    this.onSend?.(target, message);
    const id = String(this.nextId++);
    const seen: SeenMessage = { id, chatId: target.chatId, threadId: target.threadId, text: message.text, buttons: (message.buttons ?? []).flat(), edits: 0 };
    if (message.file) seen.file = { name: message.file.name, size: message.file.data.length };
    if (message.replyTo !== undefined) seen.replyTo = message.replyTo;
    this.chat(target.chatId).push(seen);
    this.changed();
    return { chatId: target.chatId, threadId: target.threadId, messageId: id };
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    const seen = this.chat(ref.chatId).find((entry) => entry.id === ref.messageId);
    if (!seen) throw new Error(`message ${ref.messageId} not found`);
    seen.text = message.text;
    seen.buttons = (message.buttons ?? []).flat();
    seen.edits += 1;
    this.changed();
  }

  async typing(target: Target): Promise<void> {
    this.typingChats.push(target.chatId);
  }

  /**
   * Live answers by `capabilities.streaming`: `draft` shows a preview beside the chat (DMs
   * only) and is never the answer; `native` and `edit` stream into a message of the chat
   * that becomes the answer; `none` (the default) shows nothing.
   */
  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    const streaming = this.capabilities.streaming ?? 'none';
    switch (streaming) {
      case 'none':
        return undefined;
      case 'draft':
        return options.chatType === 'dm' ? this.draftAnswer(target) : undefined;
      case 'native':
      case 'edit':
        return this.streamedAnswer(target, options);
    }
  }

  private draftAnswer(target: Target): LiveAnswer {
    const log = (event: 'update' | 'finish' | 'cancel', text: string) => {
      this.liveLog.push({ chatId: target.chatId, event, text });
      if (event === 'update') this.drafts.set(target.chatId, text);
      else this.drafts.delete(target.chatId);
      this.changed();
    };
    return {
      update: (text) => log('update', text),
      finish: async (answer) => void log('finish', answer.text),
      cancel: async () => log('cancel', ''),
    };
  }

  private streamedAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer {
    let seen: SeenMessage | undefined;
    const refOf = (message: SeenMessage): SentRef => ({ chatId: target.chatId, threadId: target.threadId, messageId: message.id });
    const show = (whole: string): SeenMessage => {
      // One message shows at most what fits; the gateway sends a longer answer in parts.
      const max = this.capabilities.maxMessageLength;
      const text = whole.length > max ? `${whole.slice(0, max - 1)}…` : whole;
      if (!seen) {
        seen = { id: String(this.nextId++), chatId: target.chatId, threadId: target.threadId, text, buttons: [], edits: 0 };
        if (options.replyTo !== undefined) seen.replyTo = options.replyTo;
        this.chat(target.chatId).push(seen);
      } else {
        seen.text = text;
        seen.edits += 1;
      }
      this.changed();
      return seen;
    };
    const remove = () => {
      const messages = this.chat(target.chatId);
      if (seen && messages.includes(seen)) messages.splice(messages.indexOf(seen), 1);
      this.changed();
    };
    return {
      update: (text) => {
        this.liveLog.push({ chatId: target.chatId, event: 'update', text });
        options.onShown?.(refOf(show(text)));
      },
      finish: async (answer) => {
        const text = answer.parts[0] ?? answer.text;
        this.liveLog.push({ chatId: target.chatId, event: 'finish', text });
        if (this.refuseLiveFinish) {
          remove();
          return undefined;
        }
        const shown = show(text);
        await this.beforeLiveFinish?.(text);
        options.onShown?.(refOf(shown));
        return { ref: refOf(shown), parts: 1 };
      },
      cancel: async () => {
        this.liveLog.push({ chatId: target.chatId, event: 'cancel', text: '' });
        remove();
      },
    };
  }

  /** After a restart: a live message left in the chat becomes its answer, or goes. */
  async settleLive(ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
    const messages = this.chat(ref.chatId);
    const seen = messages.find((message) => message.id === ref.messageId);
    if (!seen) return false;
    this.liveLog.push({ chatId: ref.chatId, event: answer ? 'finish' : 'cancel', text: answer?.text ?? '' });
    if (answer) {
      seen.text = answer.text;
      seen.edits += 1;
    } else {
      messages.splice(messages.indexOf(seen), 1);
    }
    this.changed();
    return answer !== undefined;
  }

  async download(ref: string): Promise<Buffer> {
    const data = this.files.get(ref);
    if (!data) throw new Error(`no file ${ref}`);
    return data;
  }

  async directTarget(userId: string): Promise<Target> {
    return { chatId: `dm-${userId}` };
  }

  /** A person writes. DMs happen in chat `dm-<user id>`. */
  say(
    from: Person,
    text: string,
    where: {
      chatId?: string;
      chatType?: ChatType;
      threadId?: string;
      mention?: boolean;
      replyToBot?: boolean;
      attachments?: InboundMessage['attachments'];
      /** The same update again (a platform redelivering it). */
      updateId?: number;
    } & Pick<InboundMessage, 'editedAfterSeconds' | 'batchKey' | 'unsupported'> = {},
  ): void {
    if (!this.sink) throw new Error('channel not started');
    const chatType = where.chatType ?? 'dm';
    const update = where.updateId ?? nextUpdate++;
    this.sink.message({
      ...(where.editedAfterSeconds !== undefined ? { editedAfterSeconds: where.editedAfterSeconds } : {}),
      ...(where.batchKey !== undefined ? { batchKey: where.batchKey } : {}),
      ...(where.unsupported !== undefined ? { unsupported: where.unsupported } : {}),
      platform: this.platform,
      chatId: where.chatId ?? `dm-${from.id}`,
      threadId: where.threadId,
      userId: from.id,
      userName: from.name,
      chatType,
      text,
      attachments: where.attachments ?? [],
      mentionsBot: Boolean(where.mention),
      replyToBot: Boolean(where.replyToBot),
      messageId: `in-${update}`,
      updateId: String(update),
    });
  }

  /** A person presses a button on a message. */
  press(from: Person, message: SeenMessage, label: string): void {
    if (!this.sink) throw new Error('channel not started');
    const button = message.buttons.find((entry) => entry.label === label);
    if (!button) throw new Error(`message ${message.id} has no button "${label}" (has ${message.buttons.map((b) => b.label).join(', ')})`);
    const press: ButtonPress = {
      platform: this.platform,
      chatId: message.chatId,
      threadId: message.threadId,
      userId: from.id,
      userName: from.name,
      data: button.data,
      messageRef: { chatId: message.chatId, threadId: message.threadId, messageId: message.id },
      answer: async (text) => {
        this.answers.push({ userId: from.id, text });
        this.changed();
      },
    };
    this.sink.button(press);
  }

  chat(chatId: string): SeenMessage[] {
    let messages = this.chats.get(chatId);
    if (!messages) {
      messages = [];
      this.chats.set(chatId, messages);
    }
    return messages;
  }

  /**
   * Waits until `probe` returns a value, or fails with what the chats show. Re-checked on
   * every change in the chats, and every 10 ms for conditions on other things (a model's
   * requests, the database).
   */
  waitFor<T>(probe: () => T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined || value === false) return false;
        this.listeners.delete(check);
        clearTimeout(timer);
        clearInterval(poll);
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        clearInterval(poll);
        reject(new Error(`timed out waiting for ${what}; chats: ${JSON.stringify([...this.chats], null, 1).slice(0, 3000)}`));
      }, timeoutMs);
      const poll = setInterval(check, 10);
      if (!check()) this.listeners.add(check);
    });
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
