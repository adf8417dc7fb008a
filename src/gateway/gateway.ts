import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { QueryEngine } from '../engine/query-engine.js';
import type { Logger } from '../logger.js';
import type { PermissionAdmin } from '../policy/permission-admin.js';
import type { InboxRepository } from '../store/inbox.js';
import type { Store } from '../store/store.js';
import { AccessControl, type ChannelAccess } from './access.js';
import { ApprovalBroker } from './approvals.js';
import type { Attachment, ButtonPress, ChannelAdapter, ChatType, InboundMessage, InboundSink, Target } from './channel.js';
import { COMMAND_NAMES, COMMANDS, OWNER_ONLY, parseCommand, runCommand } from './commands.js';
import { handleMemoryPress } from './commands/memory.js';
import type { Memory } from '../memory/memory.js';
import type { ExtensionCommands } from './commands/skills.js';
import { Coalescer, type HeldMessage } from './coalesce.js';
import { Conversation, type BusyMode } from './conversation.js';
import { Delivery, type DeliveryOptions } from './delivery.js';
import { handleJobPress, jobsMessage } from './commands/jobs.js';
import type { JobAccess } from '../scheduler/tools.js';
import { PairingService } from './pairing.js';
import { ConversationPool } from './pool.js';
import { ChatEditClock } from './reply.js';
import { sessionKeyFor, type GroupSessions } from './session-key.js';
import { unlinkedPeople, type PersonResolver } from '../core/person.js';
import { oneLine } from '../core/text.js';
import type { SessionArchive } from '../store/session-archive.js';
import { framedText } from './framing.js';

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
  /** The outbox's first retry delay (tests shorten it) and crash-test faults (HOB_FAULT=delivery:<point>). */
  delivery?: Pick<DeliveryOptions, 'retryBaseMs' | 'fault'>;
  /** How long a long paste or an album waits for its next part; how long a run goes before busy shows (tests shorten them). */
  pasteWaitMs?: number;
  albumWaitMs?: number;
  busyAfterMs?: number;
  /** Who a platform identity belongs to (sessions are the person's); default: every identity its own person. */
  people?: PersonResolver;
};

/** An edit within this many seconds is a correction hob answers; a later one is left alone. */
const EDIT_WINDOW_SECONDS = 600;

/** An attachment as the inbox keeps it: everything but the download closure. */
type StoredAttachment = Omit<Attachment, 'download'>;

/** An inbound message as the inbox keeps it (rows from before attachment refs hold a count). */
type StoredInbound = {
  platform: string;
  chatId: string;
  threadId?: string;
  chatType: ChatType;
  userId: string;
  userName: string;
  text: string;
  attachments: StoredAttachment[] | number;
};

/**
 * The gateway: platform messages in, conversations out. The adapter's handler only checks
 * access, records the message and enqueues it; runs happen per conversation, in parallel.
 */
export class Gateway implements InboundSink {
  readonly pool: ConversationPool;
  readonly delivery: Delivery;
  readonly broker: ApprovalBroker;
  readonly access: AccessControl;
  readonly pairing: PairingService;
  private readonly inbox: InboxRepository;
  /** Past sessions, for /sessions and /resume (its statements prepared once). */
  private readonly archive: SessionArchive;
  private readonly adapters = new Map<string, ChannelAdapter>();
  private readonly editClock = new ChatEditClock();
  private readonly coalescer: Coalescer;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { store, clock, logger } = options;
    for (const adapter of options.adapters) this.adapters.set(adapter.platform, adapter);
    this.pool = new ConversationPool(clock, { maxConversations: options.maxConversations, idleTimeoutSeconds: options.idleTimeoutSeconds });
    this.delivery = new Delivery(store.outbox, clock, logger, { ...options.delivery, answerSince: (key, since) => store.conversations.lastAnswerSince(key, since) });
    const pairings = store.pairings;
    this.access = new AccessControl(options.access, pairings, clock, options.pairingTtlSeconds);
    this.broker = new ApprovalBroker(store.approvals, this.delivery, clock, logger, {
      timeoutSeconds: options.approvalTimeoutSeconds,
      isOwner: (platform, userId) => this.access.isOwner(platform, userId),
      isAllowed: (platform, userId) => this.access.isAllowedUser(platform, userId),
    });
    this.pairing = new PairingService(pairings, this.access, this.delivery, clock, logger);
    this.inbox = store.inbox;
    this.archive = store.archive;
    this.coalescer = new Coalescer(
      {
        // Within 5% of the platform's limit (Telegram cuts a long paste at 4096).
        isLong: (message) => message.text.length >= 0.95 * (this.adapters.get(message.platform)?.capabilities.maxMessageLength ?? Infinity),
        pasteWaitMs: options.pasteWaitMs ?? 1500,
        albumWaitMs: options.albumWaitMs ?? 800,
      },
      (key, parts) => this.enqueue(key, parts),
      (parts) => this.inbox.setBatch(parts.map((part) => part.inboxId)),
    );
  }

  /** Recovers what a restart left (approvals, queued messages, cut-off runs), then listens. */
  async start(): Promise<void> {
    for (const adapter of this.adapters.values()) this.delivery.register(adapter);
    // First: what the previous process leased is due again, its live messages settled, before anything new is sent.
    this.delivery.releaseLeases();
    await this.delivery.settleLeftLive();
    const notStarted = await this.broker.recoverAfterRestart(this.adapters);
    for (const key of this.options.store.conversations.pendingWork()) {
      const found = this.conversationForKey(key);
      found?.conversation.resume(found.requesterId, notStarted.get(key) ?? new Set());
    }
    this.requeueInbox();
    // Each channel comes up as fast as its own platform answers, not after the others.
    await Promise.all([...this.adapters.values()].map(async (adapter) => {
      await adapter.start(this);
      // Everyone's menu leaves out the owner's commands; the owners' DMs show them all.
      // Plugin commands join both, so they are in the menus and Slack's `/hob` knows them.
      const plugins = this.options.extensions?.menu() ?? [];
      const everyone = [...COMMANDS.filter((entry) => !OWNER_ONLY.has(entry.command)).map((entry) => ({ ...entry })), ...plugins];
      const owners = { userIds: this.access.owners(adapter.platform), commands: [...COMMANDS.map((entry) => ({ ...entry })), ...plugins] };
      await adapter.setCommands?.(everyone, owners)?.catch((error: unknown) => this.options.logger.warn({ platform: adapter.platform, err: errorMessage(error) }, 'could not register commands'));
    }));
    this.delivery.start(1000);
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
    this.coalescer.flushAll();
    if (options.stopRuns ?? true) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.graceMs ?? 5000)));
      await Promise.race([Promise.all(this.pool.all().map((conversation) => conversation.shutdown())), grace]);
      clearTimeout(timer);
    }
    await this.delivery.stop();
  }

  message(message: InboundMessage): void {
    const key = sessionKeyFor(message, this.options.groupSessions);
    try {
      this.options.store.transaction(() => this.route(message, key)); // one commit: the inbox row and, when the conversation is free, the engine storing the message
    } catch (error) {
      this.options.logger.error({ session: key, err: errorMessage(error) }, 'could not handle an inbound message');
      void this.reply(message, `Sorry, I could not take that message (${errorMessage(error)}). Please send it again.`);
    }
  }

  button(press: ButtonPress): void {
    void this.handlePress(press).catch((error: unknown) => {
      this.options.logger.error({ platform: press.platform, chat: press.chatId, err: errorMessage(error) }, 'button press failed');
      void press.answer('Something went wrong; please try again.');
    });
  }

  private route(message: InboundMessage, key: string): void {
    const adapter = this.adapters.get(message.platform);
    if (!adapter) throw new Error(`no adapter for ${message.platform}`);
    const verdict = this.access.check(message);
    if (verdict.kind === 'ignore') {
      this.options.logger.debug({ session: key, reason: verdict.reason }, 'ignored');
      return;
    }
    if (verdict.kind === 'pair') {
      void this.pairing.onUnknownSender(message, verdict.pairing, verdict.isNew, adapter).catch((error: unknown) =>
        this.options.logger.error({ session: key, err: errorMessage(error) }, 'pairing reply failed'),
      );
      return;
    }
    if (message.editedAfterSeconds !== undefined && message.editedAfterSeconds > EDIT_WINDOW_SECONDS) {
      this.options.logger.debug({ session: key, afterSeconds: message.editedAfterSeconds }, 'ignored a late edit of an old message');
      return;
    }
    if (/^\/[a-zA-Z0-9_]+@\S/.test(message.text.trim())) {
      // issue 7: a command for another bot, whatever else addresses the message (a reply to hob).
      this.options.logger.debug({ session: key }, 'ignored a command for another bot');
      return;
    }
    const updateId = message.updateId ?? `m:${message.chatId}:${message.messageId}`;
    let command = parseCommand(message.text);
    // `/skill NAME args` and plugin commands go to the model as the prompt they expand to.
    const extensionCommand = command && (command.name === 'skill' || !COMMAND_NAMES.has(command.name));
    const expansion = command && extensionCommand && message.editedAfterSeconds === undefined ? this.options.extensions?.expand(command.name, command.args) : undefined;
    if (expansion?.kind === 'reply') {
      if (this.inbox.addDone({ platform: message.platform, updateId, sessionKey: key, now: this.options.clock.now() })) void this.reply(message, expansion.text);
      return;
    }
    if (expansion?.kind === 'prompt') {
      message = { ...message, text: expansion.text };
      command = undefined;
    }
    if (command && COMMAND_NAMES.has(command.name)) {
      // Once per update (a redelivery after a restart must not run /new twice); an edited command is not run again.
      if (message.editedAfterSeconds !== undefined || !this.inbox.addDone({ platform: message.platform, updateId, sessionKey: key, now: this.options.clock.now() })) return;
      void this.command(command.name, command.args, message, key, adapter);
      return;
    }
    if (message.unsupported !== undefined && message.text === '' && message.attachments.length === 0) {
      if (!this.inbox.addDone({ platform: message.platform, updateId, sessionKey: key, now: this.options.clock.now() })) return;
      void this.reply(message, `I can't read ${describeUnsupported(message.unsupported)} yet. Send me text, a photo, a document or a voice note.`);
      return;
    }
    message = { ...message, text: framedText(message) };
    const stored: StoredInbound = {
      platform: message.platform,
      chatId: message.chatId,
      threadId: message.threadId,
      chatType: message.chatType,
      userId: message.userId,
      userName: message.userName,
      text: message.text,
      attachments: message.attachments.map(({ download: _download, ...kept }) => kept),
    };
    const inboxId = this.inbox.add({ platform: message.platform, updateId, sessionKey: key, message: JSON.stringify(stored), now: this.options.clock.now() });
    if (inboxId === undefined) return; // a redelivered update: handled already
    if (!this.coalescer.offer(key, { message, inboxId })) this.enqueue(key, [{ message, inboxId }]);
  }

  /** One message for the conversation, put together from the parts the platform split. */
  private enqueue(key: string, parts: HeldMessage[]): void {
    const [first] = parts;
    if (!first) return;
    const { message } = first;
    const adapter = this.adapters.get(message.platform);
    if (!adapter) return;
    const inboxIds = parts.map((part) => part.inboxId);
    const conversation = this.conversation(key, adapter, message, message.chatType);
    const result = conversation.enqueue({
      inboxIds,
      userId: message.userId,
      userName: message.userName,
      text: parts.map((part) => part.message.text).filter((text) => text !== '').join('\n'),
      attachments: parts.flatMap((part) => part.message.attachments),
      messageId: message.messageId,
    });
    if (result === 'full') {
      for (const id of inboxIds) this.inbox.markDone(id);
      void this.reply(message, `I'm still working on ${conversation.queued} earlier messages, so I did not take this one. Send it again in a moment, or /stop to cancel them.`);
    }
  }

  private async command(name: string, args: string, message: InboundMessage, key: string, adapter: ChannelAdapter): Promise<void> {
    try {
      await runCommand(name, args, message, {
        adapter,
        access: this.access,
        broker: this.broker,
        pairing: this.pairing,
        conversation: () => this.conversation(key, adapter, message, message.chatType),
        reply: (text) => this.reply(message, text),
        currentModel: () => this.options.model.current(),
        switchModel: (model) => this.options.model.switch(model),
        permissions: (args, userId) => this.options.permissions.command(args, userId),
        memory: this.options.memory,
        send: async (outbound) => void (await this.delivery.send(message.platform, targetOf(message), outbound)),
        jobs: this.options.jobs ? async () => {
          const list = jobsMessage(this.options.jobs as JobAccess, message.platform, message.userId, undefined, message.chatType !== 'dm');
          // A private answer (a Discord or Slack slash command) in a group keeps the list private; its buttons need a DM.
          if (message.respond && message.chatType !== 'dm') return message.respond(list.buttons?.length ? `${list.text}\n\nTo pause or delete one, send /jobs to me in a private chat.` : list.text);
          await this.delivery.send(message.platform, targetOf(message), list, key);
        } : undefined,
        extensions: this.options.extensions,
        sessions: { archive: this.archive, people: this.options.people ?? unlinkedPeople },
      });
    } catch (error) {
      this.options.logger.error({ session: key, command: name, err: errorMessage(error) }, 'command failed');
      await this.reply(message, `/${name} failed: ${errorMessage(error)}`);
    }
  }

  private async handlePress(press: ButtonPress): Promise<void> {
    const adapter = this.adapters.get(press.platform);
    if (!adapter) return;
    if (await this.broker.handlePress(press, adapter)) return;
    if (await this.pairing.handlePress(press, adapter)) return;
    if (this.options.memory && (await handleMemoryPress(this.options.memory, press, adapter))) return;
    if (this.options.jobs && (await handleJobPress(press, adapter, this.options.jobs))) return;
    const question = /^q:([0-9a-f]+):(\d+)$/.exec(press.data);
    if (question) {
      // Question ids are random: the conversation asking it is found whoever presses (in a
      // per-person group that is the asker's, so someone else is told it is not theirs).
      const id = question[1] as string;
      const conversation = this.pool.all().find((candidate) => candidate.asks(id));
      if (conversation) return conversation.handleQuestionPress(press, id, Number(question[2]));
      return press.answer('This question is no longer open.');
    }
    await press.answer('This button is no longer active.');
  }

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
        maxQueue: this.options.maxQueue,
        questionTimeoutSeconds: this.options.approvalTimeoutSeconds,
        isTrusted: (userId) => this.access.isAllowedUser(adapter.platform, userId),
      }),
    );
  }

  /** Session keys are `platform:chat[:thread][:u<user>]`; rebuilds the target to resume a run. */
  private conversationForKey(key: string): { conversation: Conversation; requesterId: string } | undefined {
    const [platform, chatId, ...rest] = key.split(':');
    const adapter = platform ? this.adapters.get(platform) : undefined;
    if (!adapter || !chatId) return undefined;
    const threadId = rest.find((part) => !part.startsWith('u'));
    const user = rest.find((part) => part.startsWith('u'))?.slice(1);
    // Who spoke last, and where, is in the inbox; else a per-person key names them, and a DM's chat is the person.
    const latest = this.inbox.latestFor(key);
    const last = latest ? (JSON.parse(latest) as StoredInbound) : undefined;
    const chatType: ChatType = last?.chatType ?? (user ? 'group' : 'dm');
    const requesterId = last?.userId ?? user ?? (threadId ? 'unknown' : chatId);
    return { conversation: this.conversation(key, adapter, { chatId, threadId }, chatType), requesterId };
  }

  /** Messages still queued when hob stopped, in order; parts of one paste or album together. */
  private requeueInbox(): void {
    const rows = this.inbox.queued();
    const taken = new Set<number>();
    for (const row of rows) {
      if (taken.has(row.id)) continue;
      // A batch's rows need not be adjacent: another chat's message may have landed between them.
      const parts = row.batch === null ? [row] : rows.filter((other) => other.batch === row.batch && other.sessionKey === row.sessionKey);
      for (const part of parts) taken.add(part.id);
      this.requeue(row.sessionKey, parts.map((part) => ({ id: part.id, stored: JSON.parse(part.message) as StoredInbound })));
    }
  }

  /** One queued message (or the parts of one); files come back through their refs. */
  private requeue(key: string, parts: { id: number; stored: StoredInbound }[]): void {
    const [head] = parts;
    const adapter = head ? this.adapters.get(head.stored.platform) : undefined;
    if (!head || !adapter) return;
    const download = adapter.download?.bind(adapter);
    const attachments: Attachment[] = [];
    let lostCount = 0;
    for (const { stored } of parts) {
      if (typeof stored.attachments === 'number') {
        lostCount += stored.attachments;
        continue;
      }
      for (const attachment of stored.attachments) {
        const { ref } = attachment;
        if (ref !== undefined && download) attachments.push({ ...attachment, download: () => download(ref) });
        else lostCount += 1;
      }
    }
    const text = parts.map(({ stored }) => stored.text).filter((part) => part !== '').join('\n');
    const lost = lostCount ? `\n[${lostCount} attachment(s) were lost in a restart; ask the person to send them again.]` : '';
    const { stored } = head;
    const inboxIds = parts.map((part) => part.id);
    const conversation = this.conversation(key, adapter, stored, stored.chatType);
    const result = conversation.enqueue({ inboxIds, userId: stored.userId, userName: stored.userName, text: text + lost, attachments });
    if (result === 'full') {
      for (const id of inboxIds) this.inbox.markDone(id);
      void this.delivery.send(stored.platform, targetOf(stored), { text: `After a restart I had too many of your messages waiting, so I did not take this one: "${oneLine(stored.text, 60)}". Please send it again.`, plain: true }, key);
    }
  }

  private async reply(message: InboundMessage, text: string): Promise<void> {
    if (message.respond) return message.respond(text);
    await this.delivery.send(message.platform, targetOf(message), { text, plain: true });
  }
}

/** Where a message came from, as a target to answer in (its thread, when it has one). */
function targetOf(where: { chatId: string; threadId?: string }): Target {
  return { chatId: where.chatId, ...(where.threadId ? { threadId: where.threadId } : {}) };
}

/** Telegram's field names, in words. */
function describeUnsupported(kind: string): string {
  const words: Record<string, string> = {
    sticker: 'stickers',
    location: 'locations',
    venue: 'places',
    contact: 'contacts',
    poll: 'polls',
    dice: 'dice',
    game: 'games',
    story: 'stories',
    invoice: 'invoices',
    paid_media: 'paid media',
    giveaway: 'giveaways',
    checklist: 'checklists',
  };
  return words[kind] ?? 'that kind of message';
}
