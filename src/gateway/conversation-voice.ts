/**
 * A conversation's voice (issue 22): a message's voice notes heard before its run, and the
 * answer spoken after its text went out. Either can take seconds (an endpoint's time), so
 * each runs under its own abort signal: /stop and the shutdown end it like a run.
 */
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { ChannelAdapter, ChatType, Target } from './channel.js';
import type { ConversationDelivery } from './conversation-delivery.js';
import type { Requester } from './conversation-run.js';
import { hearMessage, isHearable, type GatewayVoice, type HearableMessage } from './hearing.js';
import { sendSpokenReply } from './spoken-reply.js';

export type ConversationVoiceSite = {
  key: string;
  adapter: ChannelAdapter;
  target: Target;
  chatType: ChatType;
  output: ConversationDelivery;
  logger: Logger;
  workspace: string;
  /** Without it a voice note is a file like any other and no answer is spoken. */
  voice?: GatewayVoice;
};

/** What `hear` says of a message with no voice note in it: run it as it is. */
export const NOTHING_TO_HEAR = { run: true, spokenTo: false } as const;

export class ConversationVoice {
  private work: AbortController | undefined;

  constructor(private readonly site: ConversationVoiceSite) {}

  /** Hearing a note or speaking an answer right now. */
  get busy(): boolean {
    return this.work !== undefined;
  }

  /** Ends what is being heard or spoken (`reason`: why, e.g. hob is shutting down). */
  abort(reason?: unknown): void {
    this.work?.abort(reason);
  }

  /** Whether the message holds a voice note to hear (false: its run starts without waiting for `hear`). */
  hears(message: HearableMessage): boolean {
    return this.site.voice !== undefined && message.attachments.some(isHearable);
  }

  /**
   * A message's voice notes, heard before its run (see hearMessage): whether there is
   * anything for the model, and whether the person spoke. Never throws: stopped meanwhile,
   * there is nothing to run.
   */
  async hear(message: HearableMessage): Promise<{ run: boolean; spokenTo: boolean }> {
    const { voice, adapter, target, logger, key } = this.site;
    if (!voice || !this.hears(message)) return NOTHING_TO_HEAR;
    void adapter.typing(target).catch(() => undefined);
    return this.under(async (signal) => {
      const deps = { notes: voice.notes, workspace: this.site.workspace, logger, sessionKey: key, botName: adapter.botName, inGroup: this.site.chatType !== 'dm', send: this.send };
      return hearMessage(message, deps, signal);
    }, { run: false, spokenTo: false }, 'hearing a voice note failed');
  }

  /** After the answer's text: the answer spoken too, when `voice.reply` wants it (see sendSpokenReply). Never throws. */
  async speak(answer: string, requester: Requester, spokenTo: boolean): Promise<void> {
    const { voice, adapter, chatType, logger, key, output } = this.site;
    // Most answers are not spoken: decided here, they cost no abort signal of their own.
    if (!voice || output.closing || !adapter.capabilities.spokenAnswers || !(await voice.answers.wants(answer, spokenTo))) return;
    const replyTo = chatType !== 'dm' && requester.messageId !== undefined ? { replyTo: requester.messageId } : {};
    await this.under(
      (signal) => sendSpokenReply({ answer, spokenTo, capabilities: adapter.capabilities, ...replyTo, send: this.send }, { answers: voice.answers, dir: voice.spokenDir, logger, sessionKey: key }, signal),
      undefined,
      'the spoken answer failed',
    );
  }

  private readonly send = (message: Parameters<ConversationDelivery['send']>[0]) => this.site.output.send(message);

  /** Runs `work` under a fresh abort signal; a failure (a stop included) gives `otherwise`. */
  private async under<T>(work: (signal: AbortSignal) => Promise<T>, otherwise: T, failure: string): Promise<T> {
    const controller = new AbortController();
    this.work = controller;
    try {
      return await work(controller.signal);
    } catch (error) {
      if (!controller.signal.aborted) this.site.logger.error({ session: this.site.key, err: errorMessage(error) }, failure);
      return otherwise;
    } finally {
      if (this.work === controller) this.work = undefined;
    }
  }
}
