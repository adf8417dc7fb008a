import { GrammyError, type Api } from 'grammy';
import type { AdoptedAnswer, FinalAnswer, LiveAnswer } from '../../src/gateway/channel.js';
import { markdownFor, markdownToTelegramHtml, stripMarkdown } from './html.js';
import type { TelegramLogger } from './logger.js';
import { describeError, MAX_MESSAGE_LENGTH } from './outbound.js';

/** Where a draft is shown: a private chat (its id is the person's), maybe a topic in it. */
export type DraftPlace = { chatId: number; threadId?: number };

/**
 * Answers written live as Telegram drafts (`sendMessageDraft`, private chats only): a
 * preview with a native stop button that is never the answer itself, so the gateway sends
 * the answer as usual and Telegram replaces the draft with it. Draft calls are best effort:
 * a failure only costs the preview (logged once per draft), a 429 pauses the draft for as
 * long as Telegram asks, and a Bot API without drafts turns them off for this adapter.
 *
 * `api` should not wait out 429s (drafts must never hold the answer back): the adapter
 * gives it a client without the auto-retry transformer.
 */
export class TelegramDrafts {
  private readonly active = new Map<number, TelegramDraft>();
  private nextDraftId = 1 + Math.floor(Math.random() * 1_000_000_000);
  private supported = true;

  constructor(
    private readonly api: Api,
    private readonly logger: TelegramLogger,
    private readonly intervalMs: number,
  ) {}

  /** A new draft in this private chat, or undefined when drafts are off. */
  start(place: DraftPlace): LiveAnswer | undefined {
    if (!this.supported) return undefined;
    const draftId = this.nextDraftId++;
    const draft = new TelegramDraft(this, place, draftId, this.intervalMs);
    this.active.set(draftId, draft);
    return draft;
  }

  /**
   * The person pressed stop on a draft: where it was shown when it is one being written now
   * in that chat (it shows no more updates); undefined for one finished, cancelled or unknown.
   */
  stopPressed(chatId: number, draftId: number): DraftPlace | undefined {
    const draft = this.active.get(draftId);
    if (!draft || draft.place.chatId !== chatId) return undefined;
    void draft.cancel();
    return draft.place;
  }

  /** @internal a draft that ended */
  forget(draftId: number): void {
    this.active.delete(draftId);
  }

  /** @internal sends one draft text; says when to wait (429) or to stop trying */
  async send(place: DraftPlace, draftId: number, markdown: string): Promise<{ retryAfterMs?: number; stop?: boolean }> {
    const thread = place.threadId !== undefined ? { message_thread_id: place.threadId } : {};
    await markdownFor(markdown);
    const html = markdownToTelegramHtml(markdown);
    try {
      if (html.length <= MAX_MESSAGE_LENGTH) {
        try {
          await this.api.sendMessageDraft(place.chatId, draftId, html, { ...thread, parse_mode: 'HTML', can_stop: true });
          return {};
        } catch (error) {
          if (!(error instanceof GrammyError && /can't parse entities/i.test(error.description))) throw error;
        }
      }
      // Refused markup, or too long for one message: the tail of the plain text (the newest words).
      const plain = stripMarkdown(markdown);
      const text = plain.length <= MAX_MESSAGE_LENGTH ? plain : `…${plain.slice(plain.length - MAX_MESSAGE_LENGTH + 1)}`;
      await this.api.sendMessageDraft(place.chatId, draftId, text, { ...thread, can_stop: true });
      return {};
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 429) {
        return { retryAfterMs: (error.parameters.retry_after ?? 1) * 1000 };
      }
      if (error instanceof GrammyError && (error.error_code === 404 || /method not found/i.test(error.description))) {
        this.supported = false;
        this.logger.warn({ method: 'sendMessageDraft', ...describeError(error) }, 'telegram drafts are not available here; answers appear when they are complete');
        return { stop: true };
      }
      this.logger.warn({ method: 'sendMessageDraft', ...describeError(error) }, 'telegram draft update failed; the answer still follows');
      return { stop: true };
    }
  }
}

/**
 * One answer's draft: the newest text goes out at most every `intervalMs`, one call at a
 * time; finishing or cancelling waits for a call in flight, so no draft update lands after
 * the answer that replaces it.
 */
class TelegramDraft implements LiveAnswer {
  private latest = '';
  private shown = '';
  private lastSentAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly drafts: TelegramDrafts,
    readonly place: DraftPlace,
    private readonly draftId: number,
    private readonly intervalMs: number,
  ) {}

  update(text: string): void {
    if (this.ended) return;
    this.latest = text;
    this.schedule(0);
  }

  async finish(_answer: FinalAnswer): Promise<AdoptedAnswer | undefined> {
    await this.end();
    // A draft is a preview: the gateway sends the answer, which replaces it.
    return undefined;
  }

  async cancel(): Promise<void> {
    await this.end();
  }

  private async end(): Promise<void> {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.drafts.forget(this.draftId);
    await this.inFlight;
  }

  private schedule(extraWaitMs: number): void {
    if (this.timer || this.inFlight || this.ended) return;
    const wait = Math.max(extraWaitMs, this.lastSentAt + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.flush(), Math.max(0, wait));
  }

  private flush(): void {
    this.timer = undefined;
    if (this.ended || this.latest === this.shown) return;
    const text = this.latest;
    this.shown = text;
    this.lastSentAt = Date.now();
    this.inFlight = this.drafts.send(this.place, this.draftId, text).then((outcome) => {
      this.inFlight = undefined;
      if (outcome.stop) this.ended = true;
      else {
        if (outcome.retryAfterMs !== undefined) this.shown = ''; // not shown: try the newest text again
        if (this.latest !== this.shown) this.schedule(outcome.retryAfterMs ?? 0);
      }
    });
  }
}
