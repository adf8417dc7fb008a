import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, SocketModeReceiver, type Receiver } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { errorMessage } from '../../src/core/errors.js';
import { leanBodyFetch } from '../../src/core/lean-fetch.js';
import { whenIdle } from '../../src/core/when-idle.js';
import type {
  BotCommand, ChannelAdapter, FoundDelivery, InboundSink, LiveAnswer, LiveAnswerOptions, OutboundMessage, SendOptions, SentRef, Target,
  UnconfirmedDelivery,
} from '../../src/gateway/channel.js';
import { BusyIndicator } from './busy-indicator.js';
import { SlackEvents } from './events.js';
import { SlackFiles } from './files.js';
import { SlackInteractions } from './interactions.js';
import { SlackLiveAnswers } from './live-answers.js';
import { boltLogger, stderrLogger, type SlackLogger } from './logger.js';
import type { SlackIdentity } from './normalize.js';
import { describeError, SlackOutbound, slackErrorCode } from './outbound.js';
import { SLACK_CAPABILITIES } from './capabilities.js';
import { findDelivered, settleLive } from './recovery.js';
import { loadMrkdwn, MAX_MESSAGE_LENGTH } from './render.js';
import { withinRequestWindow } from './request-window.js';
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
  /** The clock for how long remembered answers stand (tests move it). */
  now?: () => number;
};

export interface SlackAdapter extends ChannelAdapter {
  /** Where the HTTP receiver listens once started in HTTP mode. */
  readonly httpAddress: AddressInfo | undefined;
}

export { SLACK_CAPABILITIES };

export function createSlackAdapter(options: SlackAdapterOptions): SlackAdapter {
  return new SlackChannel(options);
}

/**
 * The Slack side of hob, on Bolt (Socket Mode, or HTTP with signed requests): this class holds
 * the connection and hands each part of the port to its own piece — what people write
 * (events.ts), what they press and type (interactions.ts), what hob posts (outbound.ts), live
 * answers (live-answers.ts), the busy indicator and, after a crash, recovery.ts. One adapter
 * serves one start/stop cycle.
 */
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
  private readonly threads: ThreadMembership;
  private readonly files: SlackFiles;
  private readonly events: SlackEvents;
  private readonly interactions: SlackInteractions;
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
    this.threads = new ThreadMembership(this.client, this.logger, options.now);
    this.files = new SlackFiles(this.client, options.botToken);
    const { client, logger, busy, threads, files } = this;
    this.events = new SlackEvents({
      client, logger, busy, threads, files,
      identity: () => this.identity,
      sink: () => (this.state === 'running' ? this.sink : undefined),
    });
    this.interactions = new SlackInteractions({ client, logger, sink: () => this.sink, botName: () => this.botName });
  }

  private clientOptions() {
    return {
      slackApiUrl: this.options.apiUrl ?? 'https://slack.com/api/',
      retryConfig: this.options.retries ?? { retries: 3, factor: 2, minTimeout: 500, maxTimeout: 10_000 },
      // Its calls are form-encoded text: through node:http (core/lean-fetch.ts), half the CPU of
      // Node's fetch, their answers read whole without Node's own undici; a file upload's form
      // data still goes through fetch.
      fetch: leanBodyFetch(),
    };
  }

  /**
   * The Bolt app, made while hob learns who it is (`identity`, hob's own auth.test): Bolt's
   * authorize waits for that answer, so Bolt makes no auth.test of its own (one that fails
   * would reject where nobody listens) and the socket connects meanwhile.
   */
  private createApp(identity: Promise<SlackIdentity>): App {
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
    const authorize = async () => {
      const { userId, botId } = await identity;
      return { botToken: options.botToken, botUserId: userId, botId: botId ?? userId };
    };
    const app = new App({ authorize, receiver, clientOptions, logger });
    this.events.install(app);
    this.interactions.install(app);
    // Whatever a handler throws is logged; the socket keeps going.
    app.error(async (error) => {
      this.logger.error({ ...describeError(error.original ?? error) }, 'slack handler failed');
    });
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
      // Who the bot is and the connection, at once: the socket's handshake does not wait for
      // auth.test's round trip (Bolt's authorize, and so every event, waits for it instead).
      const identity = this.client.auth.test().then(
        (auth) => {
          if (!auth.user_id) throw new Error('Slack auth.test returned no bot user; check channels.slack.bot_token');
          return (this.identity = { userId: auth.user_id, ...(auth.bot_id ? { botId: auth.bot_id } : {}), ...(auth.team_id ? { teamId: auth.team_id } : {}), name: auth.user ?? 'hob' });
        },
        (error: unknown) => {
          throw new Error(`Slack refused the bot token (${slackErrorCode(error) ?? errorMessage(error)}); check channels.slack.bot_token and channels.slack.api_url`);
        },
      );
      const app = this.createApp(identity);
      this.app = app;
      const http = this.options.http;
      const connected = http
        ? app.start({ port: http.port, host: http.host ?? '127.0.0.1' }).then((server) => void (this.server = server as Server))
        : app.start().then(
            () => undefined,
            (error: unknown) => {
              throw new Error(`Slack Socket Mode did not connect (${slackErrorCode(error) ?? errorMessage(error)}); check channels.slack.app_token (an "xapp-" token with connections:write) and that Socket Mode is on`);
            },
          );
      // A refused bot token is named first, as when the two went one after the other.
      const [who, connection] = await Promise.allSettled([identity, connected]);
      if (who.status === 'rejected') throw who.reason;
      if (connection.status === 'rejected') throw connection.reason;
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.logger.info({ bot: this.botName, mode: this.options.http ? 'http' : 'socket' }, 'slack adapter started');
    // Not on the way to the first answers (a plain one never needs it), but before most Markdown.
    this.cancelMrkdwnLoad = whenIdle(() => void loadMrkdwn().catch(() => undefined));
  }

  /** Calls off the mrkdwn converter's load in hob's first idle moment (start), if it has not come. */
  private cancelMrkdwnLoad = (): void => undefined;

  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    this.cancelMrkdwnLoad();
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
    this.interactions.setCommands(everyone, owners);
  }

  /** A file's bytes by Slack file id (files.info, then its private URL with the bot token). */
  readonly download = (fileId: string): Promise<Buffer> => this.files.download(fileId);
}
