/**
 * One run of a conversation, as the person sees it. The run's events drive three views: the
 * busy sign and live answer once the run turns out slow (SlowRun, LiveAnswerFeed), and the
 * progress message and final answer (RunReporter). The run asks its person through the
 * interaction port: approvals as buttons (ApprovalBroker), questions (QuestionDesk); while
 * it waits for them it shows no typing. The answer leaves through the conversation's delivery.
 */
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { messageText, type Message } from '../core/messages.js';
import type { Logger } from '../logger.js';
import type { Interaction } from '../policy/types.js';
import type { ApprovalBroker } from './approvals.js';
import type { ChannelAdapter, ChatType, Target } from './channel.js';
import type { ConversationDelivery } from './conversation-delivery.js';
import { LiveAnswerFeed } from './live-answer.js';
import type { QuestionDesk } from './questions.js';
import { RunReporter, type ChatEditClock } from './reply.js';
import { BUSY_AFTER_MS, SlowRun } from './slow-run.js';
import { LeaseLostError } from './cluster/fence.js';

/** Whom a run answers: only they steer it, and in a group the answer replies to their message. */
export type Requester = { userId: string; userName: string; messageId?: string };

/**
 * Starts the engine's side of a run: a new message, or a run cut off by a restart.
 * `storingAnswer` goes to the engine (SubmitOptions.storingAnswer): the answer's outbox rows
 * are recorded in the commit that stores it.
 */
export type StartRun = (signal: AbortSignal, interaction: Interaction, storingAnswer: (answer: Message, store: () => void) => void) => AsyncIterable<AgentEvent>;

/** What a run needs from the gateway. */
export type RunDeps = {
  broker: ApprovalBroker;
  editClock: ChatEditClock;
  clock: Clock;
  logger: Logger;
  /** issue 7: whether a person is on allow_from (full_auto applies only to them); unset: everyone. */
  isTrusted?(userId: string): boolean;
  /** How long a run goes before typing and the live answer show (default BUSY_AFTER_MS; 0: at once). */
  busyAfterMs?: number;
  /**
   * The store's write transaction for an answer and its outbox rows: they commit in one. With
   * `withOthers` (other runs are playing) the commit may wait for the end of the turn to share
   * it with their answers (Store.transactionInTurn), and the reply is sent once `committed`
   * settles; without it, or with no `committed`, it is committed when this returns. Without
   * a transaction they commit apart.
   */
  transaction?(fn: () => void, withOthers: boolean): { committed?: Promise<void> };
  /** The runs playing in this process now, counted by every conversation's runs together. */
  playing?: { count: number };
};

/** Where a run happens: its conversation's chat, its way out and its questions. */
export type RunSite = {
  key: string;
  adapter: ChannelAdapter;
  target: Target;
  chatType: ChatType;
  output: ConversationDelivery;
  questions: QuestionDesk;
  deps: RunDeps;
};

export class ConversationRun {
  private readonly controller = new AbortController();
  private readonly slowRun: SlowRun;
  private readonly reporter: RunReporter;

  constructor(
    private readonly site: RunSite,
    readonly requester: Requester,
  ) {
    const { key, adapter, target, chatType, output, deps } = site;
    const { capabilities } = adapter;
    // In a group the answer replies to the person's message.
    const replyTo = chatType !== 'dm' && requester.messageId !== undefined ? { replyTo: requester.messageId } : {};
    this.slowRun = new SlowRun({
      adapter,
      target,
      signal: this.controller.signal,
      afterMs: deps.busyAfterMs ?? BUSY_AFTER_MS,
      feed: LiveAnswerFeed.for(adapter, target, { chatType, userId: requester.userId, ...replyTo }, deps.logger, key, output.liveRecorder()),
    });
    this.reporter = new RunReporter({
      adapter,
      target,
      sessionKey: key,
      send: (outbound) => output.send(outbound),
      sendAnswer: (messages, live) => output.sendAnswer(messages, live),
      live: this.slowRun.live,
      sendNow: (outbound) => output.sendNow(outbound),
      recorder: output,
      editIntervalMs: chatType === 'dm' ? capabilities.editIntervalMs : (capabilities.groupEditIntervalMs ?? capabilities.editIntervalMs),
      ...replyTo,
      editClock: deps.editClock,
      clock: deps.clock,
      logger: deps.logger,
    });
  }

  /** The answer the run ended with, once played (undefined after a stop or an error). */
  get answer(): string | undefined {
    return this.reporter.finalAnswer;
  }

  /** The conversation was taken over by another process mid-run (issue 23). */
  private handedOver = false;

  /** Stops the run: its tools get the abort (`reason` tells them why, e.g. hob is shutting down). */
  abort(reason?: unknown): void {
    this.controller.abort(reason);
  }

  /**
   * Runs to the last event, showing it as it goes; `onEvent` sees each event first. Never
   * throws: a failure is logged and becomes a sentence in the answer.
   */
  async play(start: StartRun, onEvent: (event: AgentEvent) => void): Promise<void> {
    const { playing } = this.site.deps;
    if (playing) playing.count++;
    try {
      for await (const event of start(this.controller.signal, this.interaction(), (answer, store) => this.storingAnswer(answer, store))) {
        onEvent(event);
        this.slowRun.onEvent(event);
        this.reporter.onEvent(event);
      }
    } catch (error) {
      if (error instanceof LeaseLostError) {
        // issue 23: another process took the conversation over and answers it; this one says nothing more.
        this.site.deps.logger.warn({ session: this.site.key, err: errorMessage(error) }, 'run left to the process that took the conversation over');
        this.handedOver = true;
        return;
      }
      this.site.deps.logger.error({ session: this.site.key, err: errorMessage(error) }, 'run failed');
      this.reporter.onEvent({ type: 'error', message: 'Something went wrong on my side; the details are in hob\'s log. Please try again.', retryable: false });
    } finally {
      if (playing) playing.count--;
      this.slowRun.stop();
    }
  }

  /** The answer, the error or "Stopped." to the chat, after `play`. Never throws. */
  async deliver(): Promise<void> {
    // A run cut by the shutdown resumes at the next start, one taken over in another process: no "Stopped." for it now.
    if ((this.site.output.closing || this.handedOver) && !this.reporter.answered) return this.reporter.abandon();
    try {
      await this.reporter.finish();
    } catch (error) {
      this.site.deps.logger.error({ session: this.site.key, err: errorMessage(error) }, 'could not deliver the reply');
    }
  }

  /**
   * The engine stores the answer: the messages that will carry it to the chat are recorded in
   * the same transaction (when it goes out as plain messages, see RunReporter.recordAnswer).
   * One commit fewer per answer, and no moment in which it is stored but not yet due anywhere.
   * While other runs play, their answers may share the commit (the reply waits for it); a run
   * alone commits at once and sends without waiting for the end of the turn.
   */
  private storingAnswer(answer: Message, store: () => void): void {
    const { transaction, playing } = this.site.deps;
    if (!transaction) return store();
    const { committed } = transaction(
      () => {
        store();
        this.reporter.recordAnswer(messageText(answer));
      },
      (playing?.count ?? 0) > 1,
    );
    if (committed) this.reporter.storedIn(committed);
  }

  /** While hob waits for the person (an approval, a question) it is not typing. */
  private interaction(): Interaction {
    const { adapter, target, questions, deps } = this.site;
    const { userId, userName } = this.requester;
    return {
      trusted: deps.isTrusted?.(userId) ?? true,
      confirm: (request, signal) => this.slowRun.whilePaused(() => deps.broker.confirm({ adapter, target, requesterName: userName }, request, signal)),
      choose: (question, options, signal) => this.slowRun.whilePaused(() => questions.ask(userId, question, options, signal)),
    };
  }
}
