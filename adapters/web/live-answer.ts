import type { AdoptedAnswer, FinalAnswer, LiveAnswer, LiveAnswerOptions, SentRef, Target } from '../../src/gateway/channel.js';
import { partKey } from '../../src/gateway/send-parts.js';
import type { ChatLog, ChatMessage } from './chat-log.js';
import type { EventHub } from './event-hub.js';
import { liveMessage, pageMessage, type PageMessage } from './page-events.js';

/** How often a live answer is redrawn at most: smooth to read, few events on the stream. */
export const LIVE_INTERVAL_MS = 80;

/**
 * The chats' live messages. Each is a stored message flagged `live` from its first text on
 * (under the delivery key the gateway recorded it with), so it has its final id from the start
 * and a restart can settle it; its text lives here, in memory, redrawn on the pages without a
 * write per redraw. A live message a crash left is hidden from pages until it is settled.
 */
export class LiveMessages {
  /** The text shown now, per chat and message id, for pages that open meanwhile. */
  private readonly texts = new Map<string, Map<string, PageMessage>>();

  constructor(
    private readonly chat: ChatLog,
    private readonly hub: EventHub,
  ) {}

  /** Stores a live message's place in the chat; returns its id. */
  open(chatId: string, key: string | undefined): string {
    const deliveryKey = key === undefined ? undefined : partKey(key, 0);
    const { message } = this.chat.addBot(chatId, { text: '', plain: false, buttons: [], live: true, ...(deliveryKey ? { deliveryKey } : {}) });
    return String(message.id);
  }

  show(chatId: string, id: string, text: string, at: number): void {
    const message = liveMessage(id, text, at);
    const chat = this.texts.get(chatId) ?? new Map<string, PageMessage>();
    chat.set(id, message);
    this.texts.set(chatId, chat);
    this.hub.toChat(chatId, { type: 'message', message });
  }

  /** The live message becomes this text; undefined when it is gone (then the pages drop it). */
  become(chatId: string, id: string, text: string): SentRef | undefined {
    this.forget(chatId, id);
    const stored = this.chat.update(chatId, Number(id), { text, plain: false, buttons: [] });
    if (!stored) {
      this.hub.toChat(chatId, { type: 'delete', id });
      return undefined;
    }
    this.hub.toChat(chatId, { type: 'message', message: pageMessage(stored) });
    return { chatId, messageId: id };
  }

  withdraw(chatId: string, id: string): void {
    this.forget(chatId, id);
    this.chat.removeLive(chatId, Number(id));
    this.hub.toChat(chatId, { type: 'delete', id });
  }

  /** A stored message as a page opening now shows it: a live one with its text so far, or not at all. */
  asPage(message: ChatMessage): PageMessage | undefined {
    return message.live ? this.texts.get(message.chatId)?.get(String(message.id)) : pageMessage(message);
  }

  private forget(chatId: string, id: string): void {
    const chat = this.texts.get(chatId);
    chat?.delete(id);
    if (chat?.size === 0) this.texts.delete(chatId);
  }
}

/**
 * An answer shown while it is written (`streaming: native`): one message on the page, redrawn
 * at most every `intervalMs`, that becomes the answer's first part on `finish` (same id: the
 * page swaps its text in place) or goes away on `cancel`. It is recorded with the gateway as
 * it first shows (`onCreating`, `onShown`), so a restart turns it into its answer or removes it.
 */
export class WebLiveAnswer implements LiveAnswer {
  private latest = '';
  private shown = '';
  private lastShownAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  private id: string | undefined;
  private readonly startedAt: number;

  constructor(
    private readonly messages: LiveMessages,
    private readonly target: Target,
    private readonly options: Pick<LiveAnswerOptions, 'onCreating' | 'onShown'>,
    private readonly maxLength: number,
    private readonly intervalMs = LIVE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  update(text: string): void {
    if (this.ended || text.trim() === '') return;
    this.latest = text;
    if (this.timer) return;
    const wait = Math.max(0, this.lastShownAt + this.intervalMs - this.now());
    if (wait === 0) return this.flush();
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  async finish(answer: FinalAnswer): Promise<AdoptedAnswer | undefined> {
    this.end();
    const [first] = answer.parts;
    // Nothing shown yet: nothing to become, and the answer goes out the ordinary way.
    if (this.id === undefined || first === undefined) return undefined;
    try {
      const ref = this.messages.become(this.target.chatId, this.id, first);
      return ref && { ref, parts: 1 };
    } catch {
      // The gateway sends the answer the ordinary way; what was shown must not stay as a second copy.
      this.withdraw();
      return undefined;
    }
  }

  async cancel(): Promise<void> {
    this.end();
    this.withdraw();
  }

  private withdraw(): void {
    try {
      if (this.id !== undefined) this.messages.withdraw(this.target.chatId, this.id);
    } catch {
      // web.db refused (hob is stopping): a live message left behind is settled at the next start.
    }
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.ended) return;
    // While longer than one message, its start with "…": the gateway sends a long answer in parts.
    const display = this.latest.length > this.maxLength ? `${this.latest.slice(0, this.maxLength - 1)}…` : this.latest;
    if (display === this.shown) return;
    try {
      this.id ??= this.messages.open(this.target.chatId, this.options.onCreating?.(display));
      this.messages.show(this.target.chatId, this.id, display, this.startedAt);
    } catch {
      // web.db refused: the answer still arrives whole when the run ends.
      return;
    }
    this.shown = display;
    this.lastShownAt = this.now();
    this.options.onShown?.({ chatId: this.target.chatId, messageId: this.id });
  }
}
