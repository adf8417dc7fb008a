import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { SHUTDOWN_REASON } from '../core/shutdown.js';
import { errorMessage } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { text, type Block, type ImageBlock } from '../core/messages.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Logger } from '../logger.js';
import type { Interaction } from '../policy/types.js';
import type { InboxRepository } from '../store/inbox.js';
import type { ApprovalBroker } from './approvals.js';
import type { Attachment, ButtonPress, ChannelAdapter, ChatType, OutboundMessage, SentRef, Target } from './channel.js';
import type { Delivery } from './delivery.js';
import { ChatEditClock, RunReporter } from './reply.js';
import { attachmentBlocks } from './attachments.js';
import type { AnswerAdoption } from './delivery-ports.js';
import { LiveAnswerFeed } from './live-answer.js';
import { BUSY_AFTER_MS, SlowRun } from './slow-run.js';

export type BusyMode = 'steer' | 'queue' | 'interrupt';



/** One message waiting for its turn. */
export type QueuedMessage = {
  /** Inbox rows this message answers for; marked done once the engine has stored it. */
  inboxIds: number[];
  userId: string;
  userName: string;
  text: string;
  attachments: Attachment[];
  /** The platform id of the person's message; in groups the answer replies to it. */
  messageId?: string;
  /** Filled from image attachments just before the run. */
  imageBlocks?: ImageBlock[];
};

export type ConversationDeps = {
  engine(): QueryEngine;
  broker: ApprovalBroker;
  delivery: Delivery;
  inbox: InboxRepository;
  editClock: ChatEditClock;
  clock: Clock;
  logger: Logger;
  workspace: string;
  busyMode: BusyMode;
  maxQueue: number;
  questionTimeoutSeconds: number;
  /** issue 7: whether a person is on allow_from (full_auto applies only to them); unset: everyone. */
  isTrusted?(userId: string): boolean;
  /** How long a run goes before typing and the live answer show (default BUSY_AFTER_MS; 0: at once). */
  busyAfterMs?: number;
};

export type EnqueueResult = 'started' | 'queued' | 'steered' | 'interrupting' | 'answered' | 'full';

type Requester = Pick<QueuedMessage, 'userId' | 'userName' | 'messageId'>;
type StartRun = (signal: AbortSignal, interaction: Interaction) => AsyncIterable<AgentEvent>;

type PendingQuestion = { id: string; askerId: string; options: string[]; resolve(answer: string): void };

/**
 * One conversation's turn-taking: a FIFO of messages, at most one run at a time, and what
 * happens to a message that arrives mid-run (busy mode). Other conversations never wait on it.
 */
export class Conversation {
  private readonly queue: QueuedMessage[] = [];
  private engineInstance: QueryEngine | undefined;
  private controller: AbortController | undefined;
  /** Whose message the current run answers (only they steer it). */
  private runningFor: string | undefined;
  private pumping: Promise<void> | undefined;
  private question: PendingQuestion | undefined;
  /** Inbox rows of steered messages, in the order the engine reads their lines. */
  private steeredInboxIds: number[][] = [];
  private questions: Promise<unknown> = Promise.resolve();
  /** hob is shutting down: runs are stopping and nothing more goes to the chat. */
  private closing = false;
  lastActive: number;

  constructor(
    readonly key: string,
    readonly adapter: ChannelAdapter,
    readonly target: Target,
    readonly chatType: ChatType,
    private readonly deps: ConversationDeps,
  ) {
    this.lastActive = deps.clock.now();
  }

  get busy(): boolean {
    return Boolean(this.controller) || this.queue.length > 0 || Boolean(this.pumping);
  }

  get queued(): number {
    return this.queue.length;
  }

  get engine(): QueryEngine {
    this.engineInstance ??= this.deps.engine();
    return this.engineInstance;
  }

  /** Drops the engine (its history stays in SQLite); only when idle. */
  evict(): boolean {
    if (this.busy) return false;
    this.engineInstance = undefined;
    return true;
  }

  enqueue(message: QueuedMessage): EnqueueResult {
    this.lastActive = this.deps.clock.now();
    if (this.question && message.userId === this.question.askerId && message.attachments.length === 0) {
      this.question.resolve(message.text);
      this.markDone(message.inboxIds);
      return 'answered';
    }
    // issue 7: with messages already waiting, steering would jump them: a text joins the last one instead.
    if (this.deps.busyMode === 'steer' && message.attachments.length === 0 && this.queue.length > 0 && this.joinLast(message)) {
      return this.controller ? 'queued' : 'started';
    }
    if (this.controller) {
      switch (this.deps.busyMode) {
        case 'steer':
          // Only the person the run is for steers it: in a shared conversation another person's
          // words wait for their own run (with their own trust, e.g. no full_auto for group-only members).
          if (message.attachments.length === 0 && this.queue.length === 0 && message.userId === this.runningFor) {
            this.engine.steer(this.lineFor(message));
            this.steeredInboxIds.push(message.inboxIds);
            return 'steered';
          }
          break;
        case 'interrupt':
          // In order behind any message that interrupted before it; the cap still holds.
          if (this.queue.length >= this.deps.maxQueue) return 'full';
          this.queue.push(message);
          this.controller.abort();
          return 'interrupting';
        case 'queue':
          break;
      }
    }
    if (this.queue.length >= this.deps.maxQueue) return 'full';
    this.queue.push(message);
    void this.pump();
    return this.controller ? 'queued' : 'started';
  }

  /** Aborts the run and clears the queue (also what was sent to steer it); returns how many messages were dropped. */
  stop(): { wasRunning: boolean; dropped: number } {
    const dropped = this.queue.splice(0);
    for (const message of dropped) this.markDone(message.inboxIds);
    const steered = this.engineInstance?.takeSteering().length ?? 0;
    this.markDone(this.steeredInboxIds.splice(0).flat());
    const wasRunning = Boolean(this.controller);
    this.controller?.abort();
    return { wasRunning, dropped: dropped.length + steered };
  }

  /**
   * For shutdown: stops the run (reason: hob is restarting) and waits for it to settle.
   * Queued messages are kept in the inbox for the next start; nothing more is sent.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    this.queue.splice(0);
    this.controller?.abort(SHUTDOWN_REASON);
    await this.pumping;
  }

  /** Resumes a run cut off by a restart. */
  resume(requesterId: string, notStarted: ReadonlySet<string>): void {
    if (!this.engine.hasPendingWork()) return;
    void this.pump((signal, interaction) => this.engine.continuePending({ userId: requesterId, interaction, signal, inGroup: this.chatType !== 'dm' }, notStarted), {
      userId: requesterId,
      userName: 'the person',
    });
  }

  /** A button press for a question this conversation asked (`q:<id>:<index>`). */
  async handleQuestionPress(press: ButtonPress, id: string, index: number): Promise<void> {
    const question = this.question;
    if (!question || question.id !== id) return press.answer('This question is no longer open.');
    if (press.userId !== question.askerId) return press.answer('This question is for someone else.');
    const answer = question.options[index];
    if (answer === undefined) return press.answer('Unknown option.');
    question.resolve(answer);
    await press.answer(`You chose: ${answer}`);
  }

  private async pump(resumeRun?: StartRun, requester?: Requester): Promise<void> {
    if (this.pumping) {
      await this.pumping;
      // The loop may have ended just before this message was queued (its finally not yet run): take it now.
      if (!resumeRun) return this.queue.length && !this.pumping ? this.pump() : undefined;
    }
    this.pumping = (async () => {
      if (resumeRun && requester) {
        await this.runOnce(requester, resumeRun);
        this.requeueUnreadSteering(requester);
      }
      for (let next = this.queue.shift(); next && !this.closing; next = this.queue.shift()) {
        const message = next;
        await this.runOnce(message, (signal, interaction) => this.submit(message, signal, interaction));
        this.requeueUnreadSteering(message);
      }
    })().finally(() => {
      this.pumping = undefined;
      // issue 7: a message queued while the loop was ending must not wait for the next one.
      if (this.queue.length > 0 && !this.closing) void this.pump();
    });
    await this.pumping;
  }

  /** A text message from the same person joins the last waiting one (in order, one run, under the cap). */
  private joinLast(message: QueuedMessage): boolean {
    const last = this.queue[this.queue.length - 1];
    if (!last || last.attachments.length > 0 || last.userId !== message.userId) return false;
    last.text = `${last.text}\n${message.text}`;
    last.inboxIds = [...last.inboxIds, ...message.inboxIds];
    return true;
  }

  /** The run for one queued message: attachments first, then the engine. */
  private async *submit(message: QueuedMessage, signal: AbortSignal, interaction: Interaction): AsyncGenerator<AgentEvent> {
    if (message.attachments.length) message.text = await this.describeAttachments(message);
    const events = this.engine.submit(this.contentFor(message), {
      userId: message.userId,
      interaction,
      signal,
      sendFile: (path, caption) => this.sendFile(path, caption),
      chatType: this.chatType,
      inGroup: this.chatType !== 'dm',
    });
    yield* markTaken(events, (start) => this.deps.inbox.markDoneWith(message.inboxIds, start));
  }

  /** Steered text the run ended without reading becomes the next message, keeping its inbox rows. */
  private requeueUnreadSteering(requester: Requester): void {
    const leftover = this.engine.takeSteering();
    const inboxIds = this.steeredInboxIds.splice(0).flat();
    if (leftover.length) this.queue.unshift({ inboxIds, userId: requester.userId, userName: requester.userName, text: leftover.join('\n'), attachments: [] });
    else this.markDone(inboxIds);
  }

  /**
   * After the engine stored a message the loop appended: the steered lines it drained are
   * in the history now, so their inbox rows are done (a restart must not run them again).
   */
  private markSteeringTaken(): void {
    const taken = this.steeredInboxIds.length - this.engine.pendingSteering;
    if (taken > 0) this.markDone(this.steeredInboxIds.splice(0, taken).flat());
  }

  private markDone(inboxIds: number[]): void {
    for (const id of inboxIds) this.deps.inbox.markDone(id);
  }

  private async runOnce(requester: Requester, start: StartRun): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    this.runningFor = requester.userId;
    const { capabilities } = this.adapter;
    // In a group the answer replies to the person's message.
    const replyTo = this.chatType !== 'dm' && requester.messageId !== undefined ? { replyTo: requester.messageId } : {};
    const slowRun = new SlowRun({
      adapter: this.adapter,
      target: this.target,
      signal: controller.signal,
      afterMs: this.deps.busyAfterMs ?? BUSY_AFTER_MS,
      feed: LiveAnswerFeed.for(this.adapter, this.target, { chatType: this.chatType, userId: requester.userId, ...replyTo }, this.deps.logger, this.key, this.deps.delivery.liveRecorder(this.adapter.platform, this.target, this.key)),
    });
    const reporter = new RunReporter({
      adapter: this.adapter,
      target: this.target,
      sessionKey: this.key,
      send: (outbound) => this.send(outbound),
      sendAnswer: (messages, live) => this.sendAnswer(messages, live),
      live: slowRun.live,
      sendNow: async (outbound) => (this.closing ? undefined : this.deps.delivery.sendNow(this.adapter.platform, this.target, outbound, this.key)),
      editIntervalMs: this.chatType === 'dm' ? capabilities.editIntervalMs : (capabilities.groupEditIntervalMs ?? capabilities.editIntervalMs),
      ...replyTo,
      editClock: this.deps.editClock,
      clock: this.deps.clock,
      logger: this.deps.logger,
    });
    const interaction = this.interactionFor(requester.userId, requester.userName, slowRun);
    try {
      for await (const event of start(controller.signal, interaction)) {
        if (event.type === 'user_message') this.markSteeringTaken();
        slowRun.onEvent(event);
        reporter.onEvent(event);
      }
    } catch (error) {
      this.deps.logger.error({ session: this.key, err: errorMessage(error) }, 'run failed');
      reporter.onEvent({ type: 'error', message: 'Something went wrong on my side; the details are in hob\'s log. Please try again.', retryable: false });
    } finally {
      this.controller = undefined;
      this.runningFor = undefined;
      slowRun.stop();
      this.lastActive = this.deps.clock.now();
    }
    // A run cut by the shutdown resumes at the next start: no "Stopped." for it now.
    if (this.closing && !reporter.answered) return reporter.abandon();
    try {
      await reporter.finish();
    } catch (error) {
      this.deps.logger.error({ session: this.key, err: errorMessage(error) }, 'could not deliver the reply');
    }
  }

  /** While hob waits for the person (an approval, a question) it is not typing. */
  private interactionFor(requesterId: string, requesterName: string, typing: Pick<SlowRun, 'whilePaused'>): Interaction {
    return {
      trusted: this.deps.isTrusted?.(requesterId) ?? true,
      confirm: (request, signal) => typing.whilePaused(() => this.deps.broker.confirm({ adapter: this.adapter, target: this.target, requesterName }, request, signal)),
      choose: (question, options, signal) => typing.whilePaused(() => this.ask(requesterId, question, options, signal)),
    };
  }

  /** Questions are asked one at a time, even when the model asks several at once. */
  private ask(askerId: string, question: string, options: string[], signal: AbortSignal): Promise<string> {
    const asked = this.questions.then(() => this.askNow(askerId, question, options, signal));
    this.questions = asked.catch(() => undefined);
    return asked;
  }

  private async askNow(askerId: string, question: string, options: string[], signal: AbortSignal): Promise<string> {
    if (signal.aborted) return '(cancelled)';
    const id = randomBytes(4).toString('hex');
    const answer = new Promise<string>((resolve) => {
      this.question = { id, askerId, options, resolve };
    });
    const sent = await this.send({
      text: `❓ ${question}${options.length ? '\n(Tap an option or type your answer.)' : ''}`,
      buttons: options.length && this.adapter.capabilities.buttons ? options.map((option, index) => [{ label: option, data: `q:${id}:${index}` }]) : undefined,
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('(no answer: the person did not reply in time)'), this.deps.questionTimeoutSeconds * 1000);
    });
    const aborted = new Promise<string>((resolve) => {
      if (signal.aborted) resolve('(cancelled)'); // stopped while the question was being sent
      signal.addEventListener('abort', () => resolve('(cancelled)'), { once: true });
    });
    const result = await Promise.race([answer, timeout, aborted]);
    clearTimeout(timer);
    this.question = undefined;
    // The buttons go; the question shows what was answered.
    if (sent && options.length && !this.closing) {
      await this.adapter.edit(sent, { text: `❓ ${question}\n→ ${result}` }).catch((error: unknown) =>
        this.deps.logger.warn({ session: this.key, err: errorMessage(error) }, 'could not close the question'),
      );
    }
    return result;
  }

  /** Whether this conversation is waiting on the question with this id. */
  asks(id: string): boolean {
    return this.question?.id === id;
  }

  private contentFor(message: QueuedMessage): Block[] {
    const blocks: Block[] = [text(this.lineFor(message))];
    for (const block of message.imageBlocks ?? []) blocks.push(block);
    return blocks;
  }

  /** In groups the model must know who speaks. */
  private lineFor(message: QueuedMessage): string {
    return this.chatType === 'dm' ? message.text : `[${message.userName}] ${message.text}`;
  }

  private async describeAttachments(message: QueuedMessage): Promise<string> {
    const { blocks, notes } = await attachmentBlocks(message.attachments, this.deps.workspace);
    message.imageBlocks = blocks;
    return [message.text, ...notes].filter(Boolean).join('\n');
  }

  private async send(message: OutboundMessage): Promise<SentRef | undefined> {
    if (this.closing) {
      // hob is stopping: what must still reach the person goes out from the next start.
      this.deps.delivery.record(this.adapter.platform, this.target, message, this.key);
      return undefined;
    }
    return this.deps.delivery.send(this.adapter.platform, this.target, message, this.key);
  }

  private async sendAnswer(messages: OutboundMessage[], live: AnswerAdoption): Promise<void> {
    if (!this.closing) {
      await this.deps.delivery.sendAnswer(this.adapter.platform, this.target, messages, this.key, live);
      return;
    }
    await live.decline();
    for (const message of messages) await this.send(message);
  }

  private async sendFile(path: string, caption?: string): Promise<void> {
    const { readFile } = await import('node:fs/promises');
    const { basename } = await import('node:path');
    const data = await readFile(path);
    await this.send({ text: caption ?? basename(path), file: { name: basename(path), data, caption } });
  }
}

/**
 * Starts the run inside `taking`, which marks the message taken in the same commit: the
 * engine stores the message in its first step, which runs synchronously.
 */
async function* markTaken(events: AsyncGenerator<AgentEvent>, taking: (start: () => void) => void): AsyncGenerator<AgentEvent> {
  let first: Promise<IteratorResult<AgentEvent>> | undefined;
  taking(() => (first = events.next()));
  const step = await (first ?? events.next());
  if (step.done) return;
  yield step.value;
  yield* events;
}
