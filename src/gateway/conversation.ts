import type { ChatOrigin } from '../tools/tool.js';
import type { Clock } from '../core/clock.js';
import { SHUTDOWN_REASON } from '../core/shutdown.js';
import type { AgentEvent } from '../core/events.js';
import type { QueryEngine, SubmitOptions } from '../engine/query-engine.js';
import type { InboxRepository } from '../store/inbox.js';
import type { Attachment, ChannelAdapter, ChatType, Target } from './channel.js';
import type { Delivery } from './delivery.js';
import { ConversationDelivery } from './conversation-delivery.js';
import { ConversationRun, type Requester, type RunDeps, type RunSite, type StartRun } from './conversation-run.js';
import { ConversationVoice, NOTHING_TO_HEAR } from './conversation-voice.js';
import type { GatewayVoice } from './hearing.js';
import { lineFor, modelInput, textInput } from './model-input.js';
import { QuestionDesk } from './questions.js';
import type { SharedDecisions } from '../store/shared-decisions.js';

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
  /** A voice note in a group that did not address hob: answered only when it names hob. */
  overheard?: boolean;
};

export type ConversationDeps = RunDeps & {
  engine(): QueryEngine;
  delivery: Delivery;
  inbox: InboxRepository;
  workspace: string;
  busyMode: BusyMode;
  maxQueue: number;
  questionTimeoutSeconds: number;
  /** issue 22: voice notes heard, answers spoken. Without it a voice note is a file like any other. */
  voice?: GatewayVoice;
  /** issue 23: several processes on one database; a question's answer may be given in another. */
  sharedDecisions?: SharedDecisions;
};

export type EnqueueResult = 'started' | 'queued' | 'steered' | 'interrupting' | 'answered' | 'full';

/**
 * One conversation's turn-taking: a FIFO of messages, at most one run at a time, and what
 * happens to a message that arrives mid-run (busy mode). Other conversations never wait on it.
 * A run itself is a ConversationRun; the chat is reached through a ConversationDelivery.
 */
export class Conversation {
  /** The question the current run asked, if any (its answer may come as the next message). */
  readonly questions: QuestionDesk;
  private readonly queue: QueuedMessage[] = [];
  private readonly output: ConversationDelivery;
  private readonly site: RunSite;
  private engineInstance: QueryEngine | undefined;
  /** The run in progress; only the person it answers steers it. */
  private run: ConversationRun | undefined;
  private pumping: Promise<void> | undefined;
  /** Inbox rows of steered messages, in the order the engine reads their lines. */
  private steeredInboxIds: number[][] = [];
  /** Voice notes heard before a run, answers spoken after it. */
  private readonly voice: ConversationVoice;
  lastActive: number;

  constructor(
    readonly key: string,
    readonly adapter: ChannelAdapter,
    readonly target: Target,
    readonly chatType: ChatType,
    private readonly deps: ConversationDeps,
  ) {
    this.lastActive = deps.clock.now();
    this.output = new ConversationDelivery(deps.delivery, adapter.platform, target, key);
    this.questions = new QuestionDesk({
      adapter,
      sessionKey: key,
      logger: deps.logger,
      timeoutSeconds: deps.questionTimeoutSeconds,
      send: (message) => this.output.send(message),
      closing: () => this.output.closing,
      shared: deps.sharedDecisions,
      now: () => deps.clock.now(),
    });
    this.site = { key, adapter, target, chatType, output: this.output, questions: this.questions, deps };
    this.voice = new ConversationVoice({ key, adapter, target, chatType, output: this.output, logger: deps.logger, workspace: deps.workspace, voice: deps.voice });
  }

  get busy(): boolean {
    return Boolean(this.run) || this.queue.length > 0 || Boolean(this.pumping);
  }

  get queued(): number {
    return this.queue.length;
  }

  get engine(): QueryEngine {
    this.engineInstance ??= this.deps.engine();
    return this.engineInstance;
  }

  /** About how much memory the engine's held history takes (0 without an engine). */
  get heldBytes(): number {
    return this.engineInstance?.heldBytes ?? 0;
  }

  /** Lets the engine's history go (it stays in the store, read back on the next message); only when idle. */
  releaseHistory(): boolean {
    return !this.busy && (this.engineInstance?.releaseHistory() ?? false);
  }

  /** Drops the engine (its history stays in SQLite); only when idle. */
  evict(): boolean {
    if (this.busy) return false;
    this.engineInstance = undefined;
    return true;
  }

  enqueue(message: QueuedMessage): EnqueueResult {
    this.lastActive = this.deps.clock.now();
    if (message.attachments.length === 0 && this.questions.answerWithText(message.userId, message.text)) {
      this.markDone(message.inboxIds);
      return 'answered';
    }
    // issue 7: with messages already waiting, steering would jump them: a text joins the last one instead.
    if (this.deps.busyMode === 'steer' && message.attachments.length === 0 && this.queue.length > 0 && this.joinLast(message)) {
      return this.run ? 'queued' : 'started';
    }
    if (this.run) {
      switch (this.deps.busyMode) {
        case 'steer':
          // Only the person the run is for steers it: in a shared conversation another person's
          // words wait for their own run (with their own trust, e.g. no full_auto for group-only members).
          if (message.attachments.length === 0 && this.queue.length === 0 && message.userId === this.run.requester.userId) {
            this.engine.steer(lineFor(message, this.chatType));
            this.steeredInboxIds.push(message.inboxIds);
            return 'steered';
          }
          break;
        case 'interrupt':
          // In order behind any message that interrupted before it; the cap still holds.
          if (this.queue.length >= this.deps.maxQueue) return 'full';
          this.queue.push(message);
          this.run.abort();
          return 'interrupting';
        case 'queue':
          break;
      }
    }
    if (this.queue.length >= this.deps.maxQueue) return 'full';
    this.queue.push(message);
    void this.pump();
    return this.run ? 'queued' : 'started';
  }

  /** Aborts the run and clears the queue (also what was sent to steer it); returns how many messages were dropped. */
  stop(): { wasRunning: boolean; dropped: number } {
    const dropped = this.queue.splice(0);
    for (const message of dropped) this.markDone(message.inboxIds);
    const steered = this.engineInstance?.takeSteering().length ?? 0;
    this.markDone(this.steeredInboxIds.splice(0).flat());
    const wasRunning = Boolean(this.run) || this.voice.busy;
    this.run?.abort();
    this.voice.abort();
    return { wasRunning, dropped: dropped.length + steered };
  }

  /**
   * For shutdown: stops the run (reason: hob is restarting) and waits for it to settle.
   * Queued messages are kept in the inbox for the next start; nothing more is sent.
   */
  async shutdown(): Promise<void> {
    this.output.close();
    this.queue.splice(0);
    this.run?.abort(SHUTDOWN_REASON);
    this.voice.abort(SHUTDOWN_REASON);
    await this.pumping;
  }

  /** This chat, as a place a background task delivers to. */
  private get chat(): ChatOrigin {
    return { platform: this.adapter.platform, chatId: this.target.chatId, ...(this.target.threadId ? { threadId: this.target.threadId } : {}) };
  }

  /** Resumes a run cut off by a restart. */
  resume(requesterId: string, notStarted: ReadonlySet<string>): void {
    if (!this.engine.hasPendingWork()) return;
    void this.pump((signal, interaction, storingAnswer) => this.engine.continuePending({ userId: requesterId, interaction, signal, inGroup: this.chatType !== 'dm', chat: this.chat, storingAnswer }, notStarted), {
      userId: requesterId,
      userName: 'the person',
    });
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
      for (let next = this.queue.shift(); next && !this.output.closing; next = this.queue.shift()) {
        const message = next;
        // Not awaited without a voice note: a free conversation's run then starts (and stores
        // the message) inside the router's commit of the inbox row (router.ts).
        const voice = this.voice.hears(message) ? await this.voice.hear(message) : NOTHING_TO_HEAR;
        if (!voice.run) {
          // Nothing for the model (an overheard note not for hob, a note not heard): done, unless hob is closing.
          if (!this.output.closing) this.markDone(message.inboxIds);
          continue;
        }
        await this.runOnce(message, (signal, interaction, storingAnswer) => this.submit(message, { signal, interaction, storingAnswer }), voice.spokenTo);
        this.requeueUnreadSteering(message);
      }
    })().finally(() => {
      this.pumping = undefined;
      // issue 7: a message queued while the loop was ending must not wait for the next one.
      if (this.queue.length > 0 && !this.output.closing) void this.pump();
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

  /** The run for one queued message: what the model reads (attachments fetched now), then the engine. */
  private async *submit(message: QueuedMessage, run: Pick<SubmitOptions, 'signal' | 'interaction' | 'storingAnswer'>): AsyncGenerator<AgentEvent> {
    const content = textInput(message, this.chatType) ?? (await modelInput(message, this.chatType, this.deps.workspace));
    const events = this.engine.submit(content, {
      ...run,
      userId: message.userId,
      sendFile: (path, caption) => this.output.sendFile(path, caption),
      chatType: this.chatType,
      inGroup: this.chatType !== 'dm',
      chat: this.chat,
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

  private async runOnce(requester: Requester, start: StartRun, spokenTo = false): Promise<void> {
    const run = new ConversationRun(this.site, requester);
    this.run = run;
    try {
      await run.play(start, (event) => {
        if (event.type === 'user_message') this.markSteeringTaken();
      });
    } finally {
      this.run = undefined;
      this.lastActive = this.deps.clock.now();
    }
    await run.deliver();
    const answer = run.answer;
    if (answer !== undefined) await this.voice.speak(answer, requester, spokenTo);
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
