import { errorMessage } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { toolUses } from '../core/messages.js';
import type { Logger } from '../logger.js';
import type { AdoptedAnswer, ChannelAdapter, FinalAnswer, LiveAnswer, LiveAnswerOptions, SentRef, Target } from './channel.js';
import type { LiveRecorder } from './delivery-ports.js';

/**
 * One run's answer as it is written, shown through the channel's live-answer capability.
 * The gateway never asks which platform it is: an adapter without `streaming` (or `none`)
 * gets no feed at all, and one that declines a chat (`liveAnswer` returns undefined, e.g.
 * drafts a platform shows only in DMs) is not asked again in this run.
 *
 * One live answer per model turn: text the model writes before calling tools is a preamble,
 * not the answer (the answer is the last turn's text, as without streaming), so that live
 * answer is cancelled when the turn ends in tool calls; the progress message shows the tools,
 * and the next turn's text opens a new live answer.
 *
 * A live message in the chat is recorded the moment the platform accepts it (`recorder`),
 * so a crash cannot leave it behind: the restart turns it into the answer or removes it.
 */
/** The outbox row of one live message (recorded as it is created) and whether the platform accepted it yet. */
type RowSlot = { row: number | undefined; started: boolean };

export class LiveAnswerFeed {
  private current: { live: LiveAnswer; slot: RowSlot } | undefined;
  private text = '';
  private declined = false;

  private constructor(
    private readonly adapter: ChannelAdapter,
    private readonly target: Target,
    private readonly options: LiveAnswerOptions,
    private readonly logger: Logger,
    private readonly sessionKey: string,
    private readonly recorder: LiveRecorder | undefined,
  ) {}

  /** A feed for this run, or undefined when the channel shows no live answers. */
  static for(adapter: ChannelAdapter, target: Target, options: LiveAnswerOptions, logger: Logger, sessionKey: string, recorder?: LiveRecorder): LiveAnswerFeed | undefined {
    const streaming = adapter.capabilities.streaming ?? 'none';
    if (streaming === 'none' || !adapter.liveAnswer) return undefined;
    return new LiveAnswerFeed(adapter, target, options, logger, sessionKey, recorder);
  }

  /** Feeds one run event. Must not throw. */
  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.text += event.text;
        if (this.text.trim() !== '') this.update();
        break;
      case 'retry':
        // A retried model call writes its text again from the start.
        this.text = '';
        break;
      case 'assistant_message':
        this.text = '';
        if (toolUses(event.message).length > 0) void this.cancel();
        break;
      default:
        break;
    }
  }

  /**
   * Ends the live view without an answer (a preamble, a stopped or failed run). Its outbox
   * row is withdrawn, unless `keepRow`: the answer was written into it, and the caller sends
   * it the ordinary way. Must not throw.
   */
  async cancel(options: { keepRow?: boolean } = {}): Promise<void> {
    const current = this.current;
    this.current = undefined;
    this.text = '';
    if (!current) return;
    try {
      await current.live.cancel();
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not end the live answer');
    }
    if (!options.keepRow) this.closeRow(current.slot);
  }

  /** The outbox row of the live message showing now, once the platform accepted it. */
  get liveRow(): number | undefined {
    return this.current?.slot.row;
  }

  /**
   * Asks the live view to become the final answer, or its first messages. The caller has
   * already recorded the answer (the first message into `liveRow`). Returns the live message
   * and how many of the parts it shows, else undefined (then the answer is sent as usual).
   * Must not throw.
   */
  async adopt(answer: FinalAnswer): Promise<AdoptedAnswer | undefined> {
    const current = this.current;
    const recordedRow = current?.slot.row;
    this.current = undefined;
    this.text = '';
    if (!current) return undefined;
    let adopted: AdoptedAnswer | undefined;
    try {
      adopted = await current.live.finish(answer);
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'the live answer could not become the answer; sending it instead');
    }
    // A live message recorded only while it finished is not the row the answer went into: the answer's rows hold it.
    if (current.slot.row !== recordedRow) this.closeRow(current.slot);
    return adopted;
  }

  /** Whether a live view is showing now. */
  get showing(): boolean {
    return this.current !== undefined;
  }

  private closeRow(slot: RowSlot): void {
    if (slot.row !== undefined) this.recorder?.withdrawn(slot.row);
  }

  /** Recording never costs the live view: a failure is logged. */
  private guarded<T>(record: () => T): T | undefined {
    try {
      return record();
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not record the live answer');
      return undefined;
    }
  }

  private update(): void {
    try {
      this.open()?.update(this.text);
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not update the live answer');
    }
  }

  private open(): LiveAnswer | undefined {
    if (this.current || this.declined) return this.current?.live;
    const slot: RowSlot = { row: undefined, started: false };
    const recorded = (preview: string): string | undefined => {
      if (!this.recorder || slot.row !== undefined) return undefined;
      const { id, key } = this.recorder.creating(preview);
      slot.row = id;
      return key;
    };
    const onCreating = (preview: string) => this.guarded(() => recorded(preview));
    const onShown = (ref: SentRef) =>
      this.guarded(() => {
        if (slot.row === undefined) recorded('');
        if (slot.row === undefined) return;
        if (slot.started) return this.recorder?.shown(slot.row);
        slot.started = true;
        this.recorder?.started(slot.row, ref);
      });
    try {
      const live = this.adapter.liveAnswer?.(this.target, { ...this.options, onCreating, onShown });
      if (live) this.current = { live, slot };
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not start a live answer');
    }
    if (!this.current) this.declined = true;
    return this.current?.live;
  }
}
