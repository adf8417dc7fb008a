import type {
  Button,
  ButtonPress,
  ChannelAdapter,
  ChannelCapabilities,
  ChatType,
  InboundMessage,
  InboundSink,
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

  constructor(capabilities: Partial<ChannelCapabilities> = {}) {
    this.capabilities = { maxMessageLength: 4096, markup: 'plain', buttons: true, edits: true, files: true, editIntervalMs: 0, ...capabilities };
  }

  async start(sink: InboundSink): Promise<void> {
    this.sink = sink;
  }

  async stop(): Promise<void> {
    this.sink = undefined;
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
