/**
 * The way in for every message an adapter hands over, in the platform's handler (so it only
 * decides and records; runs happen in the conversations): who may talk (access, pairing),
 * which conversation it belongs to (the session key), what it is — a command for hob, a
 * command the extensions expand into a prompt, something hob cannot read, or a message for
 * the model — and, for a message, recorded in the inbox, put back together with the parts
 * the platform split (coalescing), then queued in its conversation.
 */
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { InboxRepository } from '../store/inbox.js';
import type { AccessControl } from './access.js';
import type { Cluster } from './cluster/cluster.js';
import type { ChannelAdapter, InboundMessage } from './channel.js';
import type { ChatCommands } from './chat-commands.js';
import { Coalescer, type HeldMessage } from './coalesce.js';
import { CONVERSATION_COMMANDS, parseCommand } from './commands.js';
import type { ExtensionCommands } from './commands/skills.js';
import type { Delivery } from './delivery.js';
import { framedText } from './framing.js';
import { isOverheardVoiceNote } from './hearing.js';
import { replyTo } from './inbound-reply.js';
import type { PairingService } from './pairing.js';
import type { OpenConversation } from './pool.js';
import { sessionKeyFor, type GroupSessions } from './session-key.js';
import { storeInbound } from './stored-inbound.js';

/** An edit within this many seconds is a correction hob answers; a later one is left alone. */
const EDIT_WINDOW_SECONDS = 600;

export type RouterDeps = {
  /** One commit for the inbox rows of a turn's messages and, where the conversation is free, the engine storing each (nested: savepoints). */
  store: Pick<Store, 'transaction'>;
  clock: Clock;
  logger: Logger;
  groupSessions: GroupSessions;
  adapter(platform: string): ChannelAdapter | undefined;
  access: AccessControl;
  pairing: PairingService;
  inbox: InboxRepository;
  delivery: Delivery;
  commands: ChatCommands;
  extensions?: ExtensionCommands;
  conversation: OpenConversation;
  /** issue 23: whether this process runs the message's conversation, or hands it on. */
  cluster: Pick<Cluster, 'admit' | 'forget' | 'several'>;
  /**
   * issue 22: a voice note in a group that does not address hob is taken (from people hob
   * talks to there) and answered only when what it says names hob. Needs a transcription endpoint.
   */
  overhears?: boolean;
  /** How long a long paste or an album waits for its next part. */
  pasteWaitMs?: number;
  albumWaitMs?: number;
};

export class InboundRouter {
  private readonly coalescer: Coalescer;
  /** Messages handed over in this turn of the event loop, routed together at its end. */
  private readonly arrived: InboundMessage[] = [];
  private routing: NodeJS.Immediate | undefined;

  constructor(private readonly deps: RouterDeps) {
    this.coalescer = new Coalescer(
      {
        // Within 5% of the platform's limit: a platform that splits long pastes cuts them there.
        isLong: (message) => message.text.length >= 0.95 * (deps.adapter(message.platform)?.capabilities.maxMessageLength ?? Infinity),
        pasteWaitMs: deps.pasteWaitMs ?? 1500,
        albumWaitMs: deps.albumWaitMs ?? 800,
      },
      (key, parts) => this.enqueue(key, parts),
      (parts) => deps.inbox.setBatch(parts.map((part) => part.inboxId)),
    );
  }

  /**
   * One inbound message, routed at the end of this turn of the event loop with the others
   * that arrived in it (see `routeArrived`). Must not throw: a failure is logged and the
   * person asked to send it again.
   */
  message(message: InboundMessage): void {
    this.arrived.push(message);
    this.routing ??= setImmediate(() => this.routeArrived());
  }

  /** Routes what has arrived now, then releases the parts held for a paste or an album (shutdown: they are in the inbox either way). */
  flush(): void {
    this.routeArrived();
    this.coalescer.flushAll();
  }

  /**
   * The messages that arrived in one turn (a platform's batch: many people writing at once),
   * in order, in one commit: each message's inbox row and, when its conversation is free, the
   * engine storing it. A commit writes every page it changed, and these share most of theirs
   * (the inbox's, the messages', the search rows'), so one commit for twenty costs little more
   * than one for one. Each message is a savepoint of its own: one that fails is undone alone
   * and its person asked to send it again. Nothing leaves the process before the commit: the
   * model requests and replies the routing starts go out after this turn. No platform waits
   * for it either: updates are confirmed to the platform as they are handed over, as before.
   */
  private routeArrived(): void {
    if (this.routing) clearImmediate(this.routing);
    this.routing = undefined;
    const batch = this.arrived.splice(0).map((message) => ({ message, key: sessionKeyFor(message, this.deps.groupSessions) }));
    const { store } = this.deps;
    if (batch.length === 1) {
      const [{ message, key }] = batch as [{ message: InboundMessage; key: string }];
      try {
        store.transaction(() => this.route(message, key));
      } catch (error) {
        this.failed(message, key, error);
      }
      return;
    }
    const failed: { message: InboundMessage; key: string; error: unknown }[] = [];
    try {
      store.transaction(() => {
        for (const { message, key } of batch) {
          try {
            store.transaction(() => this.route(message, key));
          } catch (error) {
            failed.push({ message, key, error });
          }
        }
      });
    } catch (error) {
      // The commit itself failed: none of them is stored.
      for (const { message, key } of batch) this.failed(message, key, error);
      return;
    }
    for (const { message, key, error } of failed) this.failed(message, key, error);
  }

  private failed(message: InboundMessage, key: string, error: unknown): void {
    this.deps.cluster.forget(key);
    this.deps.logger.error({ session: key, err: errorMessage(error) }, 'could not handle an inbound message');
    void replyTo(this.deps.delivery, message, `Sorry, I could not take that message (${errorMessage(error)}). Please send it again.`);
  }

  private route(message: InboundMessage, key: string): void {
    const adapter = this.deps.adapter(message.platform);
    if (!adapter) throw new Error(`no adapter for ${message.platform}`);
    const overheard = this.overheard(message);
    // Access as if addressed: whether it was for hob is heard from the note itself.
    if (!this.admitted(overheard ? { ...message, mentionsBot: true } : message, key, adapter)) return;
    const updateId = message.updateId ?? `m:${message.chatId}:${message.messageId}`;
    // Once per update: a redelivery after a restart must not run /new twice.
    const firstTime = () => this.deps.inbox.addDone({ platform: message.platform, updateId, sessionKey: key, now: this.deps.clock.now() });
    let command = parseCommand(message.text);
    // `/skill NAME args` and plugin commands go to the model as the prompt they expand to.
    const extensionCommand = command && (command.name === 'skill' || !this.deps.commands.has(command.name));
    const expansion = command && extensionCommand && message.editedAfterSeconds === undefined ? this.deps.extensions?.expand(command.name, command.args) : undefined;
    if (expansion?.kind === 'reply') {
      if (firstTime()) void replyTo(this.deps.delivery, message, expansion.text);
      return;
    }
    if (expansion?.kind === 'prompt') {
      message = { ...message, text: expansion.text };
      command = undefined;
    }
    if (command && this.deps.commands.has(command.name)) {
      // An edited command is not run again.
      if (message.editedAfterSeconds !== undefined) return;
      if (this.deps.cluster.several && CONVERSATION_COMMANDS.has(command.name)) return this.routeCommand(message, key, updateId, command, adapter);
      if (!firstTime()) return;
      void this.deps.commands.run(command.name, command.args, message, key, adapter);
      return;
    }
    if (message.unsupported !== undefined && message.text === '' && message.attachments.length === 0) {
      if (!firstTime()) return;
      void replyTo(this.deps.delivery, message, `I can't read ${contentInWords(message.unsupported)} yet. Send me text, a photo, a document or a voice note.`);
      return;
    }
    message = { ...message, text: framedText(message) };
    const inboxId = this.deps.inbox.add({ platform: message.platform, updateId, sessionKey: key, message: storeInbound(message, { overheard }), now: this.deps.clock.now() });
    if (inboxId === undefined) return; // a redelivered update: handled already
    // issue 23: another process runs this conversation (it is woken and reads the row), or this one just took it over.
    if (!this.deps.cluster.admit(key, inboxId)) return;
    if (!this.coalescer.offer(key, { message, inboxId })) this.enqueue(key, [{ message, inboxId }]);
  }

  /**
   * issue 23: a command for the conversation, with several processes: stored in the inbox like
   * a message, so the process that runs the conversation runs it (woken as for a message; one
   * that takes the conversation over finds it there) and answers it once. Run here when this
   * process runs the conversation, or takes it now.
   */
  private routeCommand(message: InboundMessage, key: string, updateId: string, command: { name: string; args: string }, adapter: ChannelAdapter): void {
    const { inbox, cluster, clock } = this.deps;
    const inboxId = inbox.add({ platform: message.platform, updateId, sessionKey: key, message: storeInbound(message, { command: true }), now: clock.now() });
    if (inboxId === undefined) return; // a redelivered update: handled already
    if (!cluster.admit(key, inboxId)) return;
    inbox.markDone(inboxId);
    void this.deps.commands.run(command.name, command.args, message, key, adapter);
  }

  private overheard(message: InboundMessage): boolean {
    return this.deps.overhears === true && isOverheardVoiceNote(message);
  }

  /** Whether hob answers this message at all: from someone allowed, a recent edit, not another bot's command. */
  private admitted(message: InboundMessage, key: string, adapter: ChannelAdapter): boolean {
    const { logger } = this.deps;
    const verdict = this.deps.access.check(message);
    if (verdict.kind === 'ignore') {
      logger.debug({ session: key, reason: verdict.reason }, 'ignored');
      return false;
    }
    if (verdict.kind === 'pair') {
      void this.deps.pairing.onUnknownSender(message, verdict.pairing, verdict.isNew, adapter).catch((error: unknown) =>
        logger.error({ session: key, err: errorMessage(error) }, 'pairing reply failed'),
      );
      return false;
    }
    if (message.editedAfterSeconds !== undefined && message.editedAfterSeconds > EDIT_WINDOW_SECONDS) {
      logger.debug({ session: key, afterSeconds: message.editedAfterSeconds }, 'ignored a late edit of an old message');
      return false;
    }
    if (/^\/[a-zA-Z0-9_]+@\S/.test(message.text.trim())) {
      // issue 7: a command for another bot, whatever else addresses the message (a reply to hob).
      logger.debug({ session: key }, 'ignored a command for another bot');
      return false;
    }
    return true;
  }

  /** One message for the conversation, put together from the parts the platform split. */
  private enqueue(key: string, parts: HeldMessage[]): void {
    const [first] = parts;
    if (!first) return;
    const { message } = first;
    const adapter = this.deps.adapter(message.platform);
    if (!adapter) return;
    const inboxIds = parts.map((part) => part.inboxId);
    const conversation = this.deps.conversation(key, adapter, message, message.chatType);
    const result = conversation.enqueue({
      inboxIds,
      userId: message.userId,
      userName: message.userName,
      text: parts.map((part) => part.message.text).filter((text) => text !== '').join('\n'),
      attachments: parts.flatMap((part) => part.message.attachments),
      messageId: message.messageId,
      ...(parts.every((part) => this.overheard(part.message)) ? { overheard: true } : {}),
    });
    if (result === 'full') {
      for (const id of inboxIds) this.deps.inbox.markDone(id);
      void replyTo(this.deps.delivery, message, `I'm still working on ${conversation.queued} earlier messages, so I did not take this one. Send it again in a moment, or /stop to cancel them.`);
    }
  }
}

/** Kinds that are their own plural. */
const SAME_IN_PLURAL = new Set(['dice', 'media', 'paid media']);
/** Kinds a person knows by another word. */
const PLAIN_WORDS: Record<string, string> = { venue: 'places' };

/**
 * A kind of content as adapters name it (`sticker`, `paid_media`: a singular noun, `_` for a
 * space), in words for the person: "stickers", "paid media". Anything else is "that kind of message".
 */
export function contentInWords(kind: string): string {
  const noun = kind.replace(/_/g, ' ').trim().toLowerCase();
  if (!/^[a-z]+( [a-z]+)*$/.test(noun)) return 'that kind of message';
  if (PLAIN_WORDS[noun]) return PLAIN_WORDS[noun];
  if (SAME_IN_PLURAL.has(noun)) return noun;
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}
