import { errorMessage } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { toolUses } from '../core/messages.js';
import type { Logger } from '../logger.js';
import type { ChannelAdapter, LiveAnswer, LiveAnswerOptions, SentRef, Target } from './channel.js';

/**
 * One run's answer as it is written, shown through the channel's live-answer capability.
 * The gateway never asks which platform it is: an adapter without `streaming` (or `none`)
 * gets no feed at all, and one that declines a chat (`liveAnswer` returns undefined, e.g.
 * Telegram drafts outside DMs) is not asked again in this run.
 *
 * One live answer per model turn: text the model writes before calling tools is a preamble,
 * not the answer (the answer is the last turn's text, as without streaming), so that live
 * answer is cancelled when the turn ends in tool calls; the progress message shows the tools,
 * and the next turn's text opens a new live answer.
 */
export class LiveAnswerFeed {
  private current: LiveAnswer | undefined;
  private text = '';
  private declined = false;

  private constructor(
    private readonly adapter: ChannelAdapter,
    private readonly target: Target,
    private readonly options: LiveAnswerOptions,
    private readonly logger: Logger,
    private readonly sessionKey: string,
  ) {}

  /** A feed for this run, or undefined when the channel shows no live answers. */
  static for(adapter: ChannelAdapter, target: Target, options: LiveAnswerOptions, logger: Logger, sessionKey: string): LiveAnswerFeed | undefined {
    const streaming = adapter.capabilities.streaming ?? 'none';
    if (streaming === 'none' || !adapter.liveAnswer) return undefined;
    return new LiveAnswerFeed(adapter, target, options, logger, sessionKey);
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

  /** Ends the live view without an answer (a preamble, a stopped or failed run). Must not throw. */
  async cancel(): Promise<void> {
    const live = this.current;
    this.current = undefined;
    this.text = '';
    if (!live) return;
    try {
      await live.cancel();
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not end the live answer');
    }
  }

  /**
   * Asks the live view to become the final answer. The caller has already recorded the answer
   * in the outbox. Returns the answer's ref when it did, else undefined (then the answer is
   * sent as usual). Must not throw.
   */
  async adopt(finalText: string): Promise<SentRef | undefined> {
    const live = this.current;
    this.current = undefined;
    this.text = '';
    if (!live) return undefined;
    try {
      return await live.finish(finalText);
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'the live answer could not become the answer; sending it instead');
      return undefined;
    }
  }

  /** Whether a live view is showing now. */
  get showing(): boolean {
    return this.current !== undefined;
  }

  private update(): void {
    try {
      this.open()?.update(this.text);
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not update the live answer');
    }
  }

  private open(): LiveAnswer | undefined {
    if (this.current || this.declined) return this.current;
    try {
      this.current = this.adapter.liveAnswer?.(this.target, this.options);
    } catch (error) {
      this.logger.warn({ session: this.sessionKey, err: errorMessage(error) }, 'could not start a live answer');
    }
    if (!this.current) this.declined = true;
    return this.current;
  }
}
