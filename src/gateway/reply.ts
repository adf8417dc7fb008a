import type { Clock } from '../core/clock.js';
import { assertNever, type AgentEvent } from '../core/events.js';
import { messageText, toolUses } from '../core/messages.js';
import { oneLine } from '../core/text.js';
import type { Logger } from '../logger.js';
import type { ChannelAdapter, OutboundMessage, SentRef, Target } from './channel.js';
import type { AnswerAdoption, Recorded } from './delivery-ports.js';
import { splitMessage } from './format/split.js';
import type { LiveAnswerFeed } from './live-answer.js';

/** Last edit time per chat, shared by every run in that chat (platform limits are per chat). */
export class ChatEditClock {
  private readonly lastEdit = new Map<string, number>();
  waitMs(chat: string, intervalMs: number, now: number): number {
    return Math.max(0, (this.lastEdit.get(chat) ?? 0) + intervalMs - now);
  }
  mark(chat: string, now: number): void {
    this.lastEdit.set(chat, now);
  }
}

type ToolLine = { id: string; text: string; state: 'running' | 'ok' | 'error' | 'note' };

/** How the answer's messages are recorded ahead of their send (ConversationDelivery): in the commit that stores the answer. */
export type AnswerRecorder = {
  /** A row for the message, leased to this run; undefined when it cannot be recorded now (hob is closing). */
  record(message: OutboundMessage): Recorded | undefined;
  sendRecorded(row: Recorded, message: OutboundMessage): Promise<SentRef | undefined>;
  /** The row will not be sent: the answer turned out otherwise. */
  withdraw(row: Recorded): void;
};

/** The run's live answer as the reporter uses it (a LiveAnswerFeed, or one held back until the run is slow). */
export type LiveView = Pick<LiveAnswerFeed, 'onEvent' | 'cancel' | 'adopt' | 'showing' | 'liveRow'>;

export type ReplyOptions = {
  adapter: ChannelAdapter;
  target: Target;
  sessionKey: string;
  /** Sends through the delivery outbox (the answer). */
  send(message: OutboundMessage): Promise<SentRef | undefined>;
  /**
   * The answer's messages when a live view may show it: recorded, then offered to the live
   * view, else sent (`Delivery.sendAnswer`). Without it, the answer goes through `send`.
   */
  sendAnswer?(messages: OutboundMessage[], live: AnswerAdoption): Promise<unknown>;
  /** The answer shown while it is written, when the channel can (see LiveAnswerFeed and SlowRun). */
  live?: LiveView;
  /** Sends at once, unrecorded (the progress message: a failed one is not delivered later). */
  sendNow(message: OutboundMessage): Promise<SentRef | undefined>;
  /** Records a plain answer's messages when the engine stores it (recordAnswer); without it they are recorded as they are sent. */
  recorder?: AnswerRecorder;
  /** Minimum milliseconds between progress edits in this chat. */
  editIntervalMs: number;
  /** In groups: the person's message this run answers; the first message sent replies to it. */
  replyTo?: string;
  editClock: ChatEditClock;
  clock: Clock;
  logger: Logger;
};

/**
 * Shows one run in a chat: a progress message edited in place with a line per tool call
 * (throttled per chat), then the answer as new message(s), split at the platform's limit.
 */
export class RunReporter {
  private readonly lines: ToolLine[] = [];
  private progressRef: SentRef | undefined;
  private progressSending: Promise<void> | undefined;
  private editTimer: NodeJS.Timeout | undefined;
  private lastShown = '';
  private answer = '';
  private errorText: string | undefined;
  private stopped = false;
  private replied = false;
  /** The answer's messages, recorded when the engine stored it, and their rows. */
  private recorded: { text: string; messages: OutboundMessage[]; rows: Recorded[] } | undefined;
  /** The commit that stores the answer, when it comes at the end of the turn (Store.transactionInTurn): nothing is sent before it. */
  private stored: Promise<void> | undefined;

  constructor(private readonly options: ReplyOptions) {}

  /** Whether the run produced an answer for the person. */
  get answered(): boolean {
    return this.answer.trim() !== '';
  }

  /** The answer as the model wrote it, when the run ended with one (not stopped, no error). */
  get finalAnswer(): string | undefined {
    return this.answered && !this.errorText && !this.stopped ? this.answer : undefined;
  }

  onEvent(event: AgentEvent): void {
    this.options.live?.onEvent(event);
    switch (event.type) {
      case 'tool_started':
        this.lines.push({ id: event.id, text: `${workerMark(event.worker)}${event.name}: ${oneLine(event.summary, 120)}`, state: 'running' });
        this.scheduleProgress();
        break;
      case 'tool_finished': {
        const line = this.lines.find((entry) => entry.id === event.id);
        if (line) line.state = event.isError ? 'error' : 'ok';
        this.scheduleProgress();
        break;
      }
      case 'tool_refused':
        this.lines.push({ id: event.id, text: `${workerMark(event.worker)}${event.name}: ${oneLine(event.summary || event.reason, 120)}${event.summary ? ` — ${oneLine(event.reason, 80)}` : ''}`, state: 'error' });
        this.scheduleProgress();
        break;
      case 'assistant_message':
        if (toolUses(event.message).length === 0) this.answer = messageText(event.message);
        break;
      case 'error':
        this.errorText = event.message;
        this.options.logger.warn({ session: this.options.sessionKey, err: event.detail ?? event.message, retryable: event.retryable }, 'run ended with an error');
        break;
      case 'done':
        this.stopped = event.reason === 'aborted';
        break;
      case 'compaction':
        // One short notice per compaction, in the progress message.
        this.lines.push({ id: `compaction:${this.lines.length}`, text: compactionNotice(event.tokensBefore, event.tokensAfter), state: 'note' });
        this.scheduleProgress();
        break;
      case 'retry':
      case 'text_delta':
      case 'user_message':
      case 'tool_progress':
      case 'approval_requested':
      case 'usage':
        break;
      default:
        assertNever(event);
    }
  }

  /**
   * The engine is storing `answer` as the run's last message (inside the store's transaction):
   * when it will go out as plain messages — no live view showing it, no progress message, no
   * error — they are recorded now, in the same commit, and `finish` sends those rows.
   */
  recordAnswer(answer: string): void {
    const { recorder, live } = this.options;
    if (!recorder || live?.showing || this.lines.length || this.errorText || this.stopped || !answer.trim()) return;
    const replied = this.replied;
    const messages = this.answerMessages(answer);
    const rows: Recorded[] = [];
    for (const message of messages) {
      const row = recorder.record(message);
      if (!row) {
        // hob is closing: the answer is recorded by `finish`, as before.
        for (const taken of rows) recorder.withdraw(taken);
        this.replied = replied;
        return;
      }
      rows.push(row);
    }
    this.recorded = { text: answer, messages, rows };
  }

  /**
   * The answer (and the rows `recordAnswer` recorded with it) is committed with the turn's
   * other answers, when `committed` settles: `finish` sends nothing before.
   */
  storedIn(committed: Promise<void>): void {
    this.stored = committed;
  }

  /** Final progress state, then the answer (or the error, in one plain sentence). */
  async finish(): Promise<void> {
    if (this.editTimer) clearTimeout(this.editTimer);
    await this.answerStored();
    await this.progressSending;
    if (this.lines.length) await this.updateProgress(true);
    const parts: string[] = [];
    if (this.answer.trim()) parts.push(this.answer);
    if (this.errorText) parts.push(`⚠️ ${this.errorText}`);
    else if (this.stopped) parts.push('⏹ Stopped.');
    if (!parts.length) parts.push('(no answer)');
    const text = parts.join('\n\n');
    const { live, sendAnswer, recorder } = this.options;
    const recorded = this.recorded;
    this.recorded = undefined;
    if (recorded && recorder) {
      if (recorded.text === text && !live?.showing) {
        await live?.cancel();
        for (const [index, row] of recorded.rows.entries()) await recorder.sendRecorded(row, recorded.messages[index] as OutboundMessage);
        return;
      }
      // The run ended otherwise than its stored answer said: those rows go, the end below is sent.
      for (const row of recorded.rows) recorder.withdraw(row);
      this.unsent(recorded);
    }
    const messages = this.answerMessages(text);
    // A whole answer takes the live view's place (a long one from its first part on: the
    // live message becomes that part); a stop or an error ends the live view.
    if (live?.showing && sendAnswer && this.answered && !this.errorText && !this.stopped) {
      const parts = messages.map((message) => message.text);
      await sendAnswer(messages, { liveRow: () => live.liveRow, adopt: () => live.adopt({ text, parts }), decline: () => live.cancel({ keepRow: true }) });
      return;
    }
    await live?.cancel();
    for (const message of messages) await this.options.send(message);
  }

  /**
   * Waits for the commit that stores the answer. When it failed, the answer and its rows are
   * gone from the store (the run is still marked running there, so a restart answers again):
   * the person gets the answer now all the same, recorded anew as it is sent.
   */
  private async answerStored(): Promise<void> {
    const stored = this.stored;
    this.stored = undefined;
    if (!stored) return;
    try {
      await stored;
    } catch (error) {
      this.options.logger.error({ session: this.options.sessionKey, err: String(error) }, 'could not store the answer; sending it all the same');
      if (this.recorded) this.unsent(this.recorded);
      this.recorded = undefined;
    }
  }

  /** The recorded messages will not go out: the answer sent in their place replies to the person's message again. */
  private unsent(recorded: { messages: OutboundMessage[] }): void {
    if (recorded.messages[0]?.replyTo !== undefined) this.replied = false;
  }

  /** The run ends without a reply (hob is shutting down): the live view goes. Must not throw. */
  async abandon(): Promise<void> {
    if (this.editTimer) clearTimeout(this.editTimer);
    await this.options.live?.cancel();
  }

  /** The text as the messages that carry it, split at the platform's limit; the first replies to the person's message in a group. */
  private answerMessages(text: string): OutboundMessage[] {
    return splitMessage(text, this.options.adapter.capabilities.maxMessageLength).map((chunk): OutboundMessage => ({ text: chunk, ...this.replyTo() }));
  }

  /** The first message of the run answers the person's message; later ones follow it. */
  private replyTo(): { replyTo?: string } {
    const replyTo = this.options.replyTo;
    if (replyTo === undefined || this.replied) return {};
    this.replied = true;
    return { replyTo };
  }

  private progressText(): string {
    const marks = { running: '⏳', ok: '✅', error: '❌', note: '🗜' } as const;
    return this.lines.map((line) => `${marks[line.state]} ${line.text}`).join('\n');
  }

  private scheduleProgress(): void {
    if (this.editTimer || !this.options.adapter.capabilities.edits) {
      if (!this.options.adapter.capabilities.edits && !this.progressRef && !this.progressSending) void this.updateProgress(false);
      return;
    }
    const chat = `${this.options.adapter.platform}:${this.options.target.chatId}`;
    const wait = this.options.editClock.waitMs(chat, this.options.editIntervalMs, this.options.clock.now());
    this.editTimer = setTimeout(() => {
      this.editTimer = undefined;
      void this.updateProgress(false);
    }, wait);
  }

  private async updateProgress(final: boolean): Promise<void> {
    const text = this.progressText();
    if (!text || text === this.lastShown) return;
    if (!final && this.progressSending) return;
    const chat = `${this.options.adapter.platform}:${this.options.target.chatId}`;
    this.lastShown = text;
    this.options.editClock.mark(chat, this.options.clock.now());
    const work = (async () => {
      try {
        if (!this.progressRef) {
          // A failed first send leaves no ref: the next update tries again, nothing arrives late.
          const reply = this.replyTo();
          this.progressRef = await this.options.sendNow({ text, plain: true, ...reply });
          if (!this.progressRef) {
            this.lastShown = '';
            if (reply.replyTo !== undefined) this.replied = false; // the answer replies instead
          }
        }
        else await this.options.adapter.edit(this.progressRef, { text, plain: true });
      } catch (error) {
        this.options.logger.warn({ session: this.options.sessionKey, err: String(error) }, 'progress update failed');
      }
    })();
    this.progressSending = work;
    await work;
    this.progressSending = undefined;
    if (!final && this.progressText() !== this.lastShown) this.scheduleProgress();
  }
}

/** A worker's calls show under its name, indented below the agent call that started it. */
function workerMark(worker: string | undefined): string {
  return worker ? `  ${worker} › ` : '';
}

/** What the person reads when the conversation was compacted. */
export function compactionNotice(before: number, after: number): string {
  return `This conversation got long, so I summarized its older part (about ${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} tokens). Nothing is lost: /sessions and a search still find it.`;
}
