import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, Assistant, HTTPReceiver, SocketModeReceiver, type Receiver } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { errorMessage } from '../../src/core/errors.js';
import type {
  BotCommand, ChannelAdapter, FoundDelivery, InboundMessage, InboundSink, LiveAnswer, LiveAnswerOptions,
  OutboundMessage, SendOptions, SentRef, Target, UnconfirmedDelivery,
} from '../../src/gateway/channel.js';
import { BusyIndicator, remember } from './busy-indicator.js';
import { SlackLiveAnswers } from './live-answers.js';
import { boltLogger, stderrLogger, type SlackLogger } from './logger.js';
import {
  attachmentOf, chatTypeOf, isPersonMessage, mentions, normalizeButtonPress, normalizeSlackMessage, type Addressing, type SlackIdentity, type SlackMessageEvent,
} from './normalize.js';
import { describeError, SlackOutbound, slackErrorCode, threadOf } from './outbound.js';
import { ACTION_PREFIX, escapeText } from './render.js';
import { withinRequestWindow } from './request-window.js';
import { SLACK_CAPABILITIES } from './capabilities.js';
import { channelCommandPointer, slashCommandText, type SlashCommand } from './slash-command.js';
import { findDelivered, settleLive } from './recovery.js';
import { ThreadMembership } from './thread-membership.js';

export type { SlackLogger } from './logger.js';

export type SlackAdapterOptions = {
  botToken: string;
  /** Socket Mode (the default way): an app-level token, "xapp-…". */
  appToken?: string;
  /** HTTP mode: requests to `/slack/events` signed with this secret. */
  http?: { signingSecret: string; port: number; host?: string };
  /** Web API base with a trailing slash, for every call (apps.connections.open included). */
  apiUrl?: string;
  logger?: SlackLogger;
  /** Socket health: how long without a pong (client ping) or a ping from Slack before the socket is replaced. */
  clientPingTimeoutMs?: number;
  serverPingTimeoutMs?: number;
  /** Web API retries (429s are waited out with Retry-After and count as one). */
  retries?: { retries: number; minTimeout?: number; maxTimeout?: number; factor?: number };
  /** Live answers: flush at least this often, and when this many characters are waiting. */
  streamFlushMs?: number;
  streamFlushChars?: number;
  /** Live answers shown by editing (no stream): at most one edit this often (default 1.2 s in DMs, 2 s elsewhere; tests shorten it). */
  liveEditIntervalMs?: number;
};

export interface SlackAdapter extends ChannelAdapter {
  /** Where the HTTP receiver listens once started in HTTP mode. */
  readonly httpAddress: AddressInfo | undefined;
}

export { SLACK_CAPABILITIES };

const SUGGESTED_PROMPTS = [
  { title: 'What can you do?', message: 'What can you do for me?' },
  { title: 'Summarise a page', message: 'Summarise this page for me: ' },
  { title: 'Run a command', message: 'Show me the disk usage of the workspace' },
];

export function createSlackAdapter(options: SlackAdapterOptions): SlackAdapter {
  return new SlackChannel(options);
}

class SlackChannel implements SlackAdapter {
  readonly platform = 'slack';
  readonly capabilities = SLACK_CAPABILITIES;
  private app: App | undefined;
  private readonly client: WebClient;
  private readonly logger: SlackLogger;
  private readonly outbound: SlackOutbound;
  private readonly busy: BusyIndicator;
  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private sink: InboundSink | undefined;
  private identity: SlackIdentity | undefined;
  private server: Server | undefined;
  private commandNames = new Set<string>();
  private readonly threads: ThreadMembership;
  /** Per conversation (`channel:thread_ts`, or the DM): the tail of its inbound queue. */
  private readonly queues = new Map<string, Promise<void>>();
  /** Assistant threads that got their title (from the first message). */
  private readonly titledThreads = new Set<string>();
  private readonly names = new Map<string, Promise<string>>();
  private readonly live: SlackLiveAnswers;
  private botId: Promise<string | undefined> | undefined;

  constructor(private readonly options: SlackAdapterOptions) {
    this.logger = options.logger ?? stderrLogger;
    if (!options.http && !options.appToken) throw new Error('Slack needs app_token (Socket Mode) or signing_secret (HTTP mode)');
    this.client = new WebClient(options.botToken, { ...this.clientOptions(), logger: boltLogger(this.logger) });
    this.outbound = new SlackOutbound(this.client, this.logger);
    this.busy = new BusyIndicator(this.client, this.logger);
    const edits = { dm: SLACK_CAPABILITIES.editIntervalMs, group: SLACK_CAPABILITIES.groupEditIntervalMs ?? SLACK_CAPABILITIES.editIntervalMs };
    this.live = new SlackLiveAnswers({
      client: this.client, outbound: this.outbound, logger: this.logger, busy: this.busy, teamId: () => this.identity?.teamId,
      flushMs: options.streamFlushMs ?? 500, flushChars: options.streamFlushChars ?? 400,
      editIntervalMs: options.liveEditIntervalMs !== undefined ? { dm: options.liveEditIntervalMs, group: options.liveEditIntervalMs } : edits,
    });
    this.threads = new ThreadMembership(this.client, this.logger);
  }

  private clientOptions() {
    return { slackApiUrl: this.options.apiUrl ?? 'https://slack.com/api/', retryConfig: this.options.retries ?? { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 10_000 } };
  }

  /**
   * The Bolt app, made once hob knows who it is: given the bot's ids, Bolt makes no auth.test
   * of its own (one that fails would reject where nobody listens).
   */
  private createApp(identity: SlackIdentity): App {
    const { options } = this;
    const clientOptions = this.clientOptions();
    const logger = boltLogger(this.logger);
    let receiver: Receiver;
    if (options.http) {
      const http = new HTTPReceiver({ signingSecret: options.http.signingSecret, endpoints: '/slack/events', logger, processBeforeResponse: false });
      http.requestListener = withinRequestWindow(http.requestListener, (skewSeconds) =>
        this.logger.warn({ skewSeconds }, 'slack: refused a signed request dated more than 5 minutes from now'),
      );
      receiver = http;
    } else {
      receiver = new SocketModeReceiver({
        appToken: options.appToken as string,
        logger,
        clientPingTimeout: options.clientPingTimeoutMs ?? 5000,
        serverPingTimeout: options.serverPingTimeoutMs ?? 30_000,
        // The socket client's own web client opens the connection: it needs the API base too.
        installerOptions: { clientOptions },
      });
    }
    const app = new App({ token: options.botToken, botUserId: identity.userId, botId: identity.botId ?? identity.userId, receiver, clientOptions, logger });
    this.installHandlers(app);
    return app;
  }

  get botName(): string | undefined {
    return this.identity?.name;
  }

  get httpAddress(): AddressInfo | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address : undefined;
  }

  async start(sink: InboundSink): Promise<void> {
    if (this.state !== 'idle') throw new Error('this Slack adapter was already started');
    this.state = 'running';
    this.sink = sink;
    try {
      const auth = await this.client.auth.test().catch((error: unknown) => {
        throw new Error(`Slack refused the bot token (${slackErrorCode(error) ?? errorMessage(error)}); check channels.slack.bot_token and channels.slack.api_url`);
      });
      if (!auth.user_id) throw new Error('Slack auth.test returned no bot user; check channels.slack.bot_token');
      this.identity = { userId: auth.user_id, ...(auth.bot_id ? { botId: auth.bot_id } : {}), ...(auth.team_id ? { teamId: auth.team_id } : {}), name: auth.user ?? 'hob' };
      const app = this.createApp(this.identity);
      this.app = app;
      const http = this.options.http;
      if (http) this.server = (await app.start({ port: http.port, host: http.host ?? '127.0.0.1' })) as Server;
      else {
        await app.start().catch((error: unknown) => {
          throw new Error(`Slack Socket Mode did not connect (${slackErrorCode(error) ?? errorMessage(error)}); check channels.slack.app_token (an "xapp-" token with connections:write) and that Socket Mode is on`);
        });
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.logger.info({ bot: this.botName, mode: this.options.http ? 'http' : 'socket' }, 'slack adapter started');
  }

  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    // Closes the socket (or the HTTP server), so no connection outlives hob.
    await this.app?.stop().catch((error: unknown) => this.logger.warn({ ...describeError(error) }, 'slack stop failed'));
  }

  async send(target: Target, message: OutboundMessage, options?: SendOptions): Promise<SentRef> {
    const ref = await this.outbound.send(target, message, options);
    if (ref.threadId !== undefined && !ref.chatId.startsWith('D')) this.threads.join(ref.chatId, ref.threadId);
    void this.busy.sent(target, message);
    return ref;
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    await this.outbound.edit(ref, message);
    void this.busy.edited(ref, message);
  }

  /**
   * The busy indicator: in the assistant pane its "is thinking…" status; elsewhere a
   * reaction on the person's message, removed once the answer is out.
   */
  async typing(target: Target): Promise<void> {
    await this.busy.working(target);
  }

  /** A stream in threads, else one message edited as the answer grows (SlackLiveAnswers). */
  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    return this.state === 'running' ? this.live.start(target, options) : undefined;
  }

  readonly settleLive = (ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> => settleLive(this.client, this.outbound, ref, answer);

  /** Also at start-up, before the socket is up: the bot's id then comes from auth.test. */
  async findDelivered(target: Target, deliveries: UnconfirmedDelivery[], known: ReadonlySet<string>): Promise<Map<string, FoundDelivery>> {
    this.botId ??= this.identity?.botId ? Promise.resolve(this.identity.botId) : this.client.auth.test().then((auth) => auth.bot_id);
    const botId = await this.botId;
    return findDelivered(this.client, botId, target, deliveries, known);
  }

  async directTarget(userId: string): Promise<Target | undefined> {
    const opened = await this.client.conversations.open({ users: userId });
    const id = opened.channel?.id;
    return id ? { chatId: id } : undefined;
  }

  /** The slash command's subcommands are the gateway's commands (and later ones it registers). */
  async setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    this.commandNames = new Set([...everyone, ...(owners?.commands ?? [])].map((entry) => entry.command.replace(/^\//, '').toLowerCase()));
  }

  /** A file's bytes by Slack file id (files.info, then its private URL with the bot token). */
  readonly download = async (fileId: string): Promise<Buffer> => {
    const info = await this.client.files.info({ file: fileId });
    const url = info.file ? fileUrlOf(info.file) : undefined;
    if (!url) throw new Error('Slack gave no download URL for this file');
    return this.fetchFile(url);
  };

  private async fetchFile(url: string): Promise<Buffer> {
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: `Bearer ${this.options.botToken}` } });
    } catch (error) {
      throw new Error(`Slack file download failed: ${errorMessage(error)}`);
    }
    if (!response.ok) throw new Error(`Slack file download failed: HTTP ${response.status}`);
    // Without the files:read scope Slack answers with its sign-in page instead of the file.
    if ((response.headers.get('content-type') ?? '').startsWith('text/html')) throw new Error('Slack sent a web page instead of the file; the app needs the files:read scope');
    return Buffer.from(await response.arrayBuffer());
  }

  private installHandlers(app: App): void {
    app.assistant(
      new Assistant({
        // Thread context lives in Slack's events; nothing to keep between them.
        threadContextStore: { get: async () => ({}), save: async () => undefined },
        threadStarted: async ({ event, setSuggestedPrompts }) => {
          const thread = event.assistant_thread;
          this.busy.assistantThread(thread.channel_id, thread.thread_ts);
          await setSuggestedPrompts({ title: 'Ask hob', prompts: SUGGESTED_PROMPTS }).catch((error: unknown) =>
            this.logger.warn({ method: 'assistant.threads.setSuggestedPrompts', ...describeError(error) }, 'slack suggested prompts failed'),
          );
        },
        userMessage: async ({ message, body }) => {
          const event = message as SlackMessageEvent;
          const key = `${event.channel}:${event.thread_ts ?? event.ts}`;
          const first = !this.titledThreads.has(key);
          this.busy.assistantThread(event.channel, event.thread_ts ?? event.ts);
          remember(this.titledThreads, key);
          const eventId = eventIdOf(body);
          this.enqueue(conversationOf(event), async () => {
            await this.onMessage(event, eventId, 'dm');
            if (first && event.thread_ts !== undefined && event.text) {
              void this.client.assistant.threads
                .setTitle({ channel_id: event.channel, thread_ts: event.thread_ts, title: event.text.slice(0, 60) })
                .catch((error: unknown) => this.logger.warn({ method: 'assistant.threads.setTitle', ...describeError(error) }, 'slack title failed'));
            }
          });
        },
      }),
    );
    // Handlers only enqueue (Bolt has acked the envelope already): each conversation's
    // messages reach the sink in the order they came, whatever one of them waits for.
    app.event('app_mention', async ({ event, body }) => {
      const mention = event as SlackMessageEvent;
      const eventId = eventIdOf(body);
      this.enqueue(conversationOf(mention), () => this.onMessage(mention, eventId, 'mention'));
    });
    app.message(async ({ message, body }) => {
      const event = message as ChangeableEvent;
      const eventId = eventIdOf(body);
      this.enqueue(conversationOf(editedMessage(event) ?? event), () => this.onChannelOrDm(event, eventId));
    });
    app.action(new RegExp(`^${ACTION_PREFIX}`), async ({ ack, body }) => {
      await ack();
      const press = normalizeButtonPress(body, this.notice);
      if (press) this.sink?.button(press);
    });
    app.command('/hob', async ({ ack, command, respond }) => {
      await ack();
      const reply = async (text: string) => {
        await respond({ response_type: 'ephemeral', text: escapeText(text) }).catch((error: unknown) =>
          this.logger.warn({ method: 'response_url', ...describeError(error) }, 'slack could not answer /hob'),
        );
      };
      this.onSlashCommand(command, reply);
    });
    // Whatever a handler throws is logged; the socket keeps going.
    app.error(async (error) => {
      this.logger.error({ ...describeError(error.original ?? error) }, 'slack handler failed');
    });
  }

  /** Runs `task` after every earlier task of the same conversation. Never rejects: failures are logged. */
  private enqueue(conversation: string, task: () => Promise<void>): void {
    const previous = this.queues.get(conversation) ?? Promise.resolve();
    const next = previous.then(task).catch((error: unknown) => this.logger.error({ session: `slack:${conversation.replace(/:$/, '')}`, ...describeError(error) }, 'slack handler failed'));
    this.queues.set(conversation, next);
    void next.then(() => {
      if (this.queues.get(conversation) === next) this.queues.delete(conversation);
    });
  }

  private async onChannelOrDm(event: ChangeableEvent, eventId: string): Promise<void> {
    const identity = this.identity;
    if (!identity) return;
    if (event.subtype === 'message_changed') {
      const edited = editedMessage(event);
      if (!edited || !isPersonMessage(edited, identity) || edited.text === event.previous_message?.text) return;
      const via = await this.addressing(edited, true);
      if (!via) return;
      const editedAfterSeconds = Math.max(0, Math.round(Number(event.event_ts ?? event.ts) - Number(edited.ts)));
      await this.onMessage(edited, eventId, via, editedAfterSeconds);
      return;
    }
    const via = await this.addressing(event, false);
    if (via) await this.onMessage(event, eventId, via);
  }

  /** How a message event is addressed to hob, or undefined when it is not. */
  private async addressing(event: SlackMessageEvent, isEdit: boolean): Promise<Addressing['via'] | undefined> {
    const identity = this.identity;
    if (!identity) return undefined;
    if (chatTypeOf(event.channel_type, event.channel) === 'dm') return 'dm';
    // A new mention arrives again as app_mention (that one is handled); an edit does not.
    if (mentions(event.text, identity.userId)) return isEdit ? 'mention' : undefined;
    // Only a person's message in a thread can be a follow-up: nothing to ask Slack otherwise.
    if (event.thread_ts === undefined || !isPersonMessage(event, identity)) return undefined;
    return (await this.threads.isMember(event.channel, event.thread_ts, identity)) ? 'follow_up' : undefined;
  }

  private async onMessage(event: SlackMessageEvent, eventId: string, via: Addressing['via'], editedAfterSeconds?: number): Promise<void> {
    const identity = this.identity;
    if (!identity || !isPersonMessage(event, identity)) return;
    const userName = await this.nameOf(event);
    const inbound = normalizeSlackMessage(event, { eventId, via, userName, ...(editedAfterSeconds !== undefined ? { editedAfterSeconds } : {}) }, identity, (file) =>
      attachmentOf(file, fileUrlOf(file) !== undefined ? () => this.fetchFile(fileUrlOf(file) as string) : this.download),
    );
    if (inbound.threadId !== undefined && inbound.chatType !== 'dm') this.threads.join(inbound.chatId, inbound.threadId);
    // Nothing reaches the sink once the adapter stopped (a lookup may finish after that).
    if (this.state !== 'running') return;
    if (editedAfterSeconds === undefined) this.busy.received(inbound, inbound.messageId);
    this.sink?.message(inbound);
  }

  private onSlashCommand(command: SlashCommand, reply: (text: string) => Promise<void>): void {
    const parsed = slashCommandText(command.text, this.commandNames);
    if (parsed.kind === 'unknown') {
      void reply(parsed.help);
      return;
    }
    const chatType = chatTypeOf(undefined, command.channel_id);
    const elsewhere = chatType === 'dm' ? undefined : channelCommandPointer(parsed.text, this.botName ?? 'hob');
    if (elsewhere !== undefined) {
      void reply(elsewhere);
      return;
    }
    const inbound: InboundMessage = {
      platform: 'slack',
      chatId: command.channel_id,
      userId: command.user_id,
      userName: command.user_name,
      chatType,
      text: parsed.text,
      attachments: [],
      mentionsBot: true,
      replyToBot: false,
      messageId: command.trigger_id,
      updateId: `command:${command.trigger_id}`,
      respond: reply,
    };
    this.sink?.message(inbound);
  }

  /** Shows a short notice to the presser only (an ephemeral message where the button is). Never throws. */
  private readonly notice = async (where: Target, userId: string, text: string): Promise<void> => {
    await this.client.chat
      .postEphemeral({ channel: where.chatId, user: userId, text: escapeText(text), ...(where.threadId !== undefined ? { thread_ts: where.threadId } : {}) })
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ method: 'chat.postEphemeral', ...describeError(error) }, 'slack notice failed'));
  };

  /** The person's name as the thread shows it (profile in the event, else users.info, once per person). */
  private nameOf(event: SlackMessageEvent): Promise<string> {
    const profile = event.user_profile;
    const fromEvent = profile?.display_name || profile?.real_name || profile?.name;
    const userId = event.user ?? 'unknown';
    if (fromEvent) return Promise.resolve(fromEvent);
    let name = this.names.get(userId);
    if (!name) {
      name = this.client.users
        .info({ user: userId })
        .then((info) => info.user?.profile?.display_name || info.user?.real_name || info.user?.name || userId)
        .catch(() => userId);
      this.names.set(userId, name);
    }
    return name;
  }
}

/** A message event, or a message_changed event carrying the edited message. */
type ChangeableEvent = SlackMessageEvent & { message?: SlackMessageEvent; previous_message?: { text?: string }; event_ts?: string };

/** A message_changed event's edited message, with the channel it is in; undefined for any other event. */
function editedMessage(event: ChangeableEvent): SlackMessageEvent | undefined {
  if (event.subtype !== 'message_changed' || !event.message) return undefined;
  return { ...event.message, channel: event.channel, ...(event.channel_type !== undefined ? { channel_type: event.channel_type } : {}) };
}

/** The conversation a message belongs to: its channel thread (a top-level mention opens one), or the DM or DM thread. */
function conversationOf(event: SlackMessageEvent): string {
  const threadTs = event.thread_ts ?? (chatTypeOf(event.channel_type, event.channel) === 'dm' ? '' : event.ts);
  return `${event.channel}:${threadTs}`;
}

/** Events carry a workspace-unique id; a redelivery carries the same one. */
function eventIdOf(body: unknown): string {
  const id = (body as { event_id?: unknown }).event_id;
  return typeof id === 'string' ? id : `event:${Date.now()}:${Math.random()}`;
}

/** Where a file's bytes are (the download URL, else the private one); an empty URL is none. */
function fileUrlOf(file: { url_private_download?: string; url_private?: string }): string | undefined {
  return file.url_private_download || file.url_private || undefined;
}
