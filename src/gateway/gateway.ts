import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { unlinkedPeople, type PersonResolver } from '../core/person.js';
import type { TaskManager } from '../engine/tasks/task-manager.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Logger } from '../logger.js';
import type { Memory } from '../memory/memory.js';
import type { PermissionAdmin } from '../policy/permission-admin.js';
import type { JobAccess } from '../scheduler/tools.js';
import type { InboxRepository } from '../store/inbox.js';
import type { SharedDecisions } from '../store/shared-decisions.js';
import type { Store } from '../store/store.js';
import { AccessControl, type ChannelAccess } from './access.js';
import { ApprovalBroker } from './approvals.js';
import { LocalCluster, type Cluster } from './cluster/cluster.js';
import type { ButtonPress, ChannelAdapter, ChatType, InboundMessage, InboundSink } from './channel.js';
import type { ChannelChatCommand } from './channel-module.js';
import { ChatCommands } from './chat-commands.js';
import { commandMenus, parseCommand } from './commands.js';
import { handleJobPress } from './commands/jobs.js';
import { handleTaskPress } from './commands/tasks.js';
import { handleMemoryPress } from './commands/memory.js';
import type { ExtensionCommands } from './commands/skills.js';
import { Conversation, type BusyMode } from './conversation.js';
import { Delivery, type DeliveryOptions } from './delivery.js';
import { targetOf } from './inbound-reply.js';
import { PairingService } from './pairing.js';
import { ConversationPool, type OpenConversation } from './pool.js';
import { listenForDecisions, PressRouter, questionPresses, stopElsewhere, type PressHandler } from './presses.js';
import { ChatEditClock } from './reply.js';
import { pullInbox, recoverAfterRestart, type RestartDeps } from './restart-recovery.js';
import type { GatewayVoice } from './hearing.js';
import { InboundRouter } from './router.js';
import { storedCommand } from './stored-inbound.js';
import type { GroupSessions } from './session-key.js';

export type GatewayOptions = {
  store: Store;
  clock: Clock;
  logger: Logger;
  adapters: ChannelAdapter[];
  access: Map<string, ChannelAccess>;
  engine(sessionKey: string): QueryEngine;
  workspace: string;
  busyMode: BusyMode;
  groupSessions: GroupSessions;
  maxQueue: number;
  maxConversations: number;
  idleTimeoutSeconds: number;
  /** How much memory the histories held between messages may take together (pool.ts's HELD_HISTORY_BYTES when unset). */
  heldHistoryBytes?: number;
  approvalTimeoutSeconds: number;
  pairingTtlSeconds: number;
  model: { current(): string; switch(name: string): Promise<string> };
  permissions: PermissionAdmin;
  /** Long-term memory: the /memory, /remember, /forget, /settings and /link commands and their buttons. */
  memory?: Memory;
  /** Reminders and reports, for `/jobs` and its buttons. */
  jobs?: JobAccess;
  /** `/skill`, plugin commands and `/mcp` (issue 12). */
  extensions?: ExtensionCommands;
  /** Commands the chat channels bring (each module's `chatCommands`): in the menus, answered on every platform. */
  channelCommands?: readonly ChannelChatCommand[];
  /** The outbox's first retry delay (tests shorten it) and crash-test faults (HOB_FAULT=delivery:<point>). */
  delivery?: Pick<DeliveryOptions, 'retryBaseMs' | 'fault'>;
  /** How long a long paste or an album waits for its next part; how long a run goes before busy shows (tests shorten them). */
  pasteWaitMs?: number;
  albumWaitMs?: number;
  busyAfterMs?: number;
  /** Who a platform identity belongs to (sessions are the person's); default: every identity its own person. */
  people?: PersonResolver;
  /** Background tasks (issue 21): `/bg`, `/tasks` and their buttons. */
  tasks?: TaskManager;
  /**
   * issue 23: several processes on one database (PostgreSQL): approvals and questions pressed
   * here for a run waiting in another process, and the notices that wake the runs waiting here.
   * Absent with SQLite. The gateway listens at start and closes it at stop.
   */
  sharedDecisions?: SharedDecisions;
  /**
   * issue 22: voice notes heard (or, without an endpoint, a sentence saying how to set it up)
   * and answers spoken. Without it a voice note is a file like any other.
   */
  voice?: GatewayVoice;
  /**
   * issue 23: who runs which conversation when several processes share a PostgreSQL store.
   * Default: this process runs them all (LocalCluster: a start recovers what a restart left).
   */
  cluster?: Cluster;
};

/**
 * The gateway: platform messages in, conversations out. It puts the parts together and runs
 * their lifecycle; a message's way through them is: the adapter → InboundRouter (access,
 * session key, commands, coalescing) → Conversation (its queue) → ConversationRun (what the
 * person sees while it runs, approvals and questions) → ConversationDelivery and the outbox.
 * The adapter's handler only checks access, records the message and enqueues it; runs happen
 * per conversation, in parallel.
 */
export class Gateway implements InboundSink {
  readonly pool: ConversationPool;
  readonly delivery: Delivery;
  readonly broker: ApprovalBroker;
  readonly access: AccessControl;
  readonly pairing: PairingService;
  readonly cluster: Cluster;
  private readonly inbox: InboxRepository;
  private readonly adapters = new Map<string, ChannelAdapter>();
  private readonly editClock = new ChatEditClock();
  /** Runs playing now, in every conversation (ConversationRun.play): an answer shares the turn's commit only while others play. */
  private readonly playing = { count: 0 };
  private readonly router: InboundRouter;
  private readonly commands: ChatCommands;
  private readonly presses: PressRouter;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { store, clock, logger } = options;
    for (const adapter of options.adapters) this.adapters.set(adapter.platform, adapter);
    this.pool = new ConversationPool(clock, { maxConversations: options.maxConversations, idleTimeoutSeconds: options.idleTimeoutSeconds, heldHistoryBytes: options.heldHistoryBytes });
    this.delivery = new Delivery(store.outbox, clock, logger, { ...options.delivery, answerSince: (key, since) => store.conversations.lastAnswerSince(key, since) });
    const pairings = store.pairings;
    this.access = new AccessControl(options.access, pairings, clock, options.pairingTtlSeconds);
    this.broker = new ApprovalBroker(store.approvals, this.delivery, clock, logger, {
      timeoutSeconds: options.approvalTimeoutSeconds,
      isOwner: (platform, userId) => this.access.isOwner(platform, userId),
      isAllowed: (platform, userId) => this.access.isAllowedUser(platform, userId),
      shared: options.sharedDecisions,
    });
    this.pairing = new PairingService(pairings, this.access, this.delivery, clock, logger);
    this.inbox = store.inbox;
    this.cluster = options.cluster ?? new LocalCluster();
    const { access, broker, pairing, delivery, inbox } = this;
    const conversation: OpenConversation = (...args) => this.conversation(...args);
    const adapter = (platform: string) => this.adapters.get(platform);
    const commands = (this.commands = new ChatCommands({
      archive: store.archive, logger, access, broker, pairing, delivery, conversation,
      model: options.model, permissions: options.permissions, memory: options.memory, jobs: options.jobs, extensions: options.extensions, people: options.people,
      tasks: options.tasks, now: () => clock.now(),
      channelCommands: options.channelCommands,
      stopElsewhere: options.sharedDecisions && ((key) => stopElsewhere(store.conversations, options.sharedDecisions as SharedDecisions, key)),
    }));
    this.router = new InboundRouter({
      store, clock, logger, groupSessions: options.groupSessions, adapter, access, pairing, inbox, delivery, commands, conversation, cluster: this.cluster,
      extensions: options.extensions, pasteWaitMs: options.pasteWaitMs, albumWaitMs: options.albumWaitMs,
      // Only with a transcription endpoint can hob hear whether a group's voice note is for it.
      overhears: options.voice?.notes.configured === true,
    });
    this.presses = new PressRouter(adapter, this.pressHandlers(), logger);
  }

  /** Recovers what a restart left (approvals, queued messages, cut-off runs), then listens. */
  async start(): Promise<void> {
    for (const adapter of this.adapters.values()) this.delivery.register(adapter);
    const recovery: RestartDeps = {
      conversations: this.options.store.conversations, inbox: this.inbox, delivery: this.delivery, broker: this.broker, adapters: this.adapters,
      conversation: (...args) => this.conversation(...args),
      unseen: (key, rows) => this.cluster.unseen(key, rows),
      command: (key, stored, adapter) => {
        const command = parseCommand(stored.text);
        if (command) void this.commands.run(command.name, command.args, storedCommand(stored), key, adapter);
      },
    };
    await this.cluster.start({
      recover: (keys) => {
        // A conversation this process ran before it was taken from it reads its history afresh.
        for (const key of keys ?? []) this.pool.peek(key)?.evict();
        return recoverAfterRestart(recovery, keys);
      },
      pull: (key) => pullInbox(recovery, key),
      platforms: [...this.adapters.keys()],
    });
    // Each channel comes up as fast as its own platform answers, not after the others.
    await Promise.all([...this.adapters.values()].map(async (adapter) => {
      await adapter.start(this);
      const menus = commandMenus(this.options.extensions?.menu() ?? [], this.access.owners(adapter.platform), this.options.channelCommands);
      await adapter.setCommands?.(menus.everyone, menus.owners)?.catch((error: unknown) => this.options.logger.warn({ platform: adapter.platform, err: errorMessage(error) }, 'could not register commands'));
    }));
    this.delivery.start(1000);
    // Runs resumed above may already wait: listening reads what they wait for once, so nothing decided meanwhile is missed.
    await listenForDecisions(this.options.sharedDecisions, this.broker, () => this.pool.all(), this.options.logger, { permissions: this.options.permissions, tasks: this.options.tasks });
    this.sweepTimer = setInterval(() => this.pool.sweep(), 60_000);
    this.sweepTimer.unref();
  }

  /**
   * Stops listening, then stops the runs in flight (their tools get the abort, so no shell
   * command outlives hob) and waits for them to write their last state, up to `graceMs`.
   * Nothing is sent to the chats while closing; queued messages stay in the inbox, and the
   * next start answers them and resumes each cut-off run. With `stopRuns: false` the runs
   * are left as they are, as a kill would leave them (tests of recovery use it).
   */
  async stop(options: { stopRuns?: boolean; graceMs?: number } = {}): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    for (const adapter of this.adapters.values()) await adapter.stop().catch(() => undefined);
    this.router.flush();
    await this.options.sharedDecisions?.close();
    if (options.stopRuns ?? true) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.graceMs ?? 5000)));
      await Promise.race([Promise.all(this.pool.all().map((conversation) => conversation.shutdown())), grace]);
      clearTimeout(timer);
    }
    await this.delivery.stop();
    // Last: the runs have written their state, so the conversations are handed over whole.
    await this.cluster.stop();
  }

  message(message: InboundMessage): void {
    this.router.message(message);
  }

  button(press: ButtonPress): void {
    this.presses.press(press);
  }

  /** Who handles a button press, in order: the first that knows its data. */
  private pressHandlers(): PressHandler[] {
    const { memory, jobs, tasks } = this.options;
    const taskServices = tasks && { tasks, people: this.options.people ?? unlinkedPeople, now: () => this.options.clock.now() };
    return [
      (press, adapter) => this.broker.handlePress(press, adapter),
      (press, adapter) => this.pairing.handlePress(press, adapter),
      ...(memory ? [(press: ButtonPress, adapter: ChannelAdapter) => handleMemoryPress(memory, press, adapter)] : []),
      ...(jobs ? [(press: ButtonPress, adapter: ChannelAdapter) => handleJobPress(press, adapter, jobs)] : []),
      ...(taskServices ? [(press: ButtonPress, adapter: ChannelAdapter) => handleTaskPress(press, adapter, taskServices)] : []),
      questionPresses(() => this.pool.all(), this.options.sharedDecisions && { decisions: this.options.sharedDecisions, now: () => this.options.clock.now() }),
    ];
  }

  /** The conversation for a session key, made in its chat when the pool holds none. */
  private conversation(key: string, adapter: ChannelAdapter, where: { chatId: string; threadId?: string }, chatType: ChatType): Conversation {
    return this.pool.get(key, () =>
      new Conversation(key, adapter, targetOf(where), chatType, {
        engine: () => this.options.engine(key),
        broker: this.broker,
        delivery: this.delivery,
        inbox: this.inbox,
        editClock: this.editClock,
        clock: this.options.clock,
        logger: this.options.logger,
        workspace: this.options.workspace,
        busyMode: this.options.busyMode,
        busyAfterMs: this.options.busyAfterMs,
        transaction: (fn, withOthers) => {
          if (withOthers) return this.options.store.transactionInTurn(fn);
          this.options.store.transaction(fn);
          return {};
        },
        playing: this.playing,
        maxQueue: this.options.maxQueue,
        questionTimeoutSeconds: this.options.approvalTimeoutSeconds,
        isTrusted: (userId) => this.access.isAllowedUser(adapter.platform, userId),
        voice: this.options.voice,
        sharedDecisions: this.options.sharedDecisions,
      }),
    );
  }
}
