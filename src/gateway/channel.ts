/**
 * The port between the gateway and each chat platform. Adapters (adapters/<platform>) see
 * only these types; the gateway sees only this interface. A platform's module (what it is
 * called, its config section, how to create its adapter) is described in channel-module.ts.
 */
import type { SpokenDelivery } from '../core/spoken-delivery.js';

export type { SpokenDelivery };

export type ChatType = 'dm' | 'group' | 'channel';

/** Where a message goes: a chat, optionally a thread (a forum topic, a thread under a message). */
export type Target = { chatId: string; threadId?: string };

export type Attachment = {
  kind: 'image' | 'document' | 'voice' | 'audio' | 'video';
  /** Fetches the bytes (lazily: only when the gateway keeps the file). */
  download(): Promise<Buffer>;
  /**
   * The platform's handle for the file (its file id), still valid after a restart:
   * a message queued when hob stopped gets its files back through `ChannelAdapter.download`.
   */
  ref?: string;
  fileName?: string;
  mimeType?: string;
  sizeBytes?: number;
  /** The length the platform reports for a voice note, an audio file or a video (seconds). */
  durationSeconds?: number;
  /**
   * A round video message (a video note): heard like a voice note (`kind` is
   * `video`), and only its sound is sent for transcription.
   */
  videoNote?: boolean;
};

export type InboundMessage = {
  platform: string;
  chatId: string;
  threadId?: string;
  userId: string;
  userName: string;
  chatType: ChatType;
  /** Text with the bot's own @mention removed; commands arrive as `/cmd args` (no @botname). */
  text: string;
  attachments: Attachment[];
  mentionsBot: boolean;
  replyToBot: boolean;
  messageId: string;
  /** Platform-unique id of the update, used to handle each update once across restarts. */
  updateId?: string;
  /** Set when this is an edit of an earlier message: seconds between sending and editing it. */
  editedAfterSeconds?: number;
  /** Messages the platform delivers apart but that belong together (an album's media group id). */
  batchKey?: string;
  /** What the message carried that hob cannot read (`sticker`, `location`, …), when that is all it carried. */
  unsupported?: string;
  /**
   * Answers a command to the sender only (an ephemeral reply to a slash command). When set, the
   * gateway replies to a command through it instead of posting in the chat. Must not throw.
   */
  respond?(text: string): Promise<void>;
  /** The thread is one conversation for everyone in it (a platform's threads are shared), whatever `group_sessions` says. */
  sharedThread?: boolean;
  /** The server the chat belongs to (a guild, a workspace): an allow list may name it instead of each chat. */
  spaceId?: string;
  /** The earlier message this one replies to (its text, and whether hob wrote it). */
  quoted?: { text: string; fromBot: boolean };
};

/** A reference to a sent message, enough to edit it later. */
export type SentRef = {
  chatId: string;
  threadId?: string;
  messageId: string;
  /** The message is a file (its text is a caption), when the sender knows it. */
  isFile?: boolean;
};

export type ButtonPress = {
  platform: string;
  chatId: string;
  threadId?: string;
  userId: string;
  userName: string;
  /** The button's callback data: hob puts only short ids here (≤ 64 bytes). */
  data: string;
  messageRef: SentRef;
  /** Shows a short notice to the presser only (a callback answer, a toast). Must not throw. */
  answer(text?: string): Promise<void>;
};

export type Button = { label: string; data: string };

export type BotCommand = { command: string; description: string };

export type OutboundMessage = {
  /** Markdown as the model writes it; the adapter renders it in its dialect. */
  text: string;
  /** Rows of buttons. */
  buttons?: Button[][];
  /** Plain: send the text without any markup rendering. */
  plain?: boolean;
  /** A file to attach (e.g. a long command too big to show inline). */
  file?: { name: string; data: Buffer; caption?: string };
  /** The platform id of a message this one answers (groups: whose question it is). */
  replyTo?: string;
  /** Audio to send (a spoken answer); `text`, when not empty, goes with it as its caption. */
  audio?: OutboundAudio;
};

/**
 * An audio file to send. It lives on disk under hob's data directory, and the outbox keeps
 * only its path: a delivery retried after a restart reads the same file again.
 */
export type OutboundAudio = {
  path: string;
  /** The name it is sent under ("answer.ogg"). */
  fileName: string;
  mimeType: string;
  /**
   * `voice_message`: Ogg/Opus, shown as a playable voice message; `audio_file`: an audio
   * attachment. The gateway asks for what the channel's `spokenAnswers` says.
   */
  as: SpokenDelivery;
  /** Its length, when known (shown on a voice message). */
  durationSeconds?: number;
};

export type SendOptions = {
  /** Parts of a split message already delivered by an earlier attempt: send only the rest. */
  skipParts?: number;
  /**
   * Told the moment the platform accepts each part, the last one included (`last`), with how
   * many parts are in the chat and that part's message id: the outbox writes it down at once,
   * so a kill between parts resends only the rest and a delivered message is never sent again.
   */
  onPartSent?(partsSent: number, messageId: string, last: boolean): void;
  /**
   * This delivery's key. The adapter puts `<key>.<part>` on every message it creates where the
   * platform keeps such a thing (a nonce the platform enforces, message metadata), so
   * a resend returns the message that exists, or `findDelivered` finds it.
   */
  deliveryKey?: string;
};

/** A delivery whose last send was cut off (a crash, a timeout): the platform may have more of it than hob knows. */
export type UnconfirmedDelivery = {
  /** Its `deliveryKey`. */
  key: string;
  message: OutboundMessage;
  /** Parts hob knows are in the chat. */
  partsSent: number;
  /** When the cut-off attempt started (ms since the epoch). */
  since: number;
};

/** What a look-up found of an unconfirmed delivery in the chat. */
export type FoundDelivery = { partsSent: number; messageId: string; complete: boolean };

/**
 * Thrown by `send` when a message went out in parts and a later part failed: the first
 * `partsSent` parts are in the chat, so a retry must not send them again.
 */
export class PartialSendError extends Error {
  constructor(
    readonly partsSent: number,
    readonly failure: unknown,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
    this.name = 'PartialSendError';
  }
}

export type ChannelCapabilities = {
  /** Longest text one message may carry. */
  maxMessageLength: number;
  buttons: boolean;
  edits: boolean;
  files: boolean;
  /** Minimum milliseconds between edits of messages in one chat. */
  editIntervalMs: number;
  /** The same in groups, where platforms allow fewer edits (some about 20 a minute). */
  groupEditIntervalMs?: number;
  /**
   * How the answer appears while the model writes it: `draft` (a DM-only preview the
   * platform draws; the answer is then sent), `native` (the platform streams a message that
   * becomes the answer), `edit` (one message edited as text arrives), `none`. The gateway
   * asks `liveAnswer` and never checks platform names.
   */
  streaming?: 'draft' | 'native' | 'edit' | 'none';
  /**
   * How a spoken answer (`voice.reply`) goes out on this channel: as a voice message or as an
   * audio file beside the text. Absent: answers stay text here.
   */
  spokenAnswers?: SpokenDelivery;
};

/** Where and for whom a live answer is shown. */
export type LiveAnswerOptions = {
  chatType: ChatType;
  /** The person the answer is for (some platforms' streams outside DMs need the recipient). */
  userId: string;
  /** The person's message the answer belongs to (groups: reply to it). */
  replyTo?: string;
  /**
   * Told just before the live message is created, with the text it will show: the gateway
   * records it then and returns the key the message should carry (as `send`'s `deliveryKey`,
   * part 0), so a crash during that call cannot leave it behind. Must not throw.
   */
  onCreating?(preview: string): string | undefined;
  /**
   * Told each time the platform accepts the live message's text, the first time when it was
   * created. Adapters whose live view is no message in the chat (a draft) call neither hook.
   * Must not throw.
   */
  onShown?(ref: SentRef): void;
};

/** The answer a live view is asked to become: its whole text and the parts it is sent in (each fits one message). */
export type FinalAnswer = { text: string; parts: string[] };

/** A live view that became the answer, or its start: its message, and how many of the parts it now shows. */
export type AdoptedAnswer = { ref: SentRef; parts: number };

/**
 * An answer shown while it is written. Never the only copy: the final answer is stored in
 * the outbox before `finish` is asked to become it, and sent normally when `finish` says no.
 *
 * The gateway starts one per model turn, at the turn's first text, and ends each with
 * exactly one `finish` or `cancel`: text written before tool calls is a preamble, not the
 * answer, so that turn's live answer is cancelled and the next turn's text starts a new one.
 */
export interface LiveAnswer {
  /** The whole text written so far in this turn (not a delta). The adapter throttles. Must not throw. */
  update(text: string): void;
  /**
   * Ends the live view with the final answer. Returns the live message's ref and how many of
   * the parts (from the first) it now shows, when it became the answer or its start: those
   * parts are delivered, the gateway sends the rest after it. Undefined when it shows none:
   * the gateway sends the answer as usual, so the adapter must not leave a live message that
   * reads as a second copy (a draft the answer replaces is fine). Must not throw.
   */
  finish(answer: FinalAnswer): Promise<AdoptedAnswer | undefined>;
  /**
   * Ends the live view without an answer: the run stopped or failed, the text was a preamble
   * to tool calls, or hob is shutting down. What was
   * shown should go (a streamed message is deleted or emptied). Must not throw.
   */
  cancel(): Promise<void>;
}

/** What the gateway gives an adapter to deliver inbound traffic. Must return quickly. */
export interface InboundSink {
  message(message: InboundMessage): void;
  button(press: ButtonPress): void;
}

export interface ChannelAdapter {
  readonly platform: string;
  readonly capabilities: ChannelCapabilities;
  /** The bot's own user name (without @), known after start. */
  readonly botName?: string;
  /** Where people open this channel when hob serves it itself (a page's address), known after start: printed when hob starts. */
  readonly url?: string;
  /** Why the channel does not serve now although it started (stopped for good, say), in words; undefined while it does. `/healthz` reads it. */
  readonly down?: string | undefined;
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
  /** Sends (split into parts when too long); the ref is the last part's. */
  send(target: Target, message: OutboundMessage, options?: SendOptions): Promise<SentRef>;
  edit(ref: SentRef, message: OutboundMessage): Promise<void>;
  typing(target: Target): Promise<void>;
  /** Starts a live answer when `capabilities.streaming` is not `none` and the chat allows it. */
  liveAnswer?(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined;
  /**
   * After a restart: a live message the previous process left in the chat. With `answer` it
   * becomes that answer (edited, its stream finished) and true is returned; otherwise, or
   * when it cannot become it, it is removed (one already gone counts as removed) and false is
   * returned. Throws when the platform cannot be asked now (the gateway tries again later).
   */
  settleLive?(ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean>;
  /**
   * Which of these deliveries, whose sends were cut off, are in this chat already, and how
   * much of each (by key). Asked once per chat before any of them is sent again; messages in
   * `known` belong to other deliveries and never match. A delivery left out may be sent: it is
   * not in the chat, or a resend returns the message that is (an enforced nonce). Throws when
   * the platform cannot be asked now (they wait). Without it (a platform that cannot be
   * asked) delivery is at least once.
   */
  findDelivered?(target: Target, deliveries: UnconfirmedDelivery[], known: ReadonlySet<string>): Promise<Map<string, FoundDelivery>>;
  /** The chat for a direct message to this user (on some platforms the user id itself). */
  directTarget?(userId: string): Promise<Target | undefined>;
  /** Fetches an attachment's bytes by its `ref` (after a restart, when the closure is gone). */
  download?(ref: string): Promise<Buffer>;
  /**
   * Registers slash commands with the platform, when it has such a menu: `everyone` for all
   * chats, and `owners.commands` (a superset) in the DMs of `owners.userIds` only.
   */
  setCommands?(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void>;
}

