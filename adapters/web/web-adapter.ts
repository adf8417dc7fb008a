import { createServer, type Server } from 'node:http';
import type {
  BotCommand, ChannelAdapter, FoundDelivery, InboundSink, LiveAnswer, LiveAnswerOptions, OutboundMessage, SendOptions, SentRef, Target, UnconfirmedDelivery,
} from '../../src/gateway/channel.js';
import { stderrLoggerOf, type AdapterLogger } from '../logger.js';
import { RateLimit, type WebApiContext } from './api-context.js';
import { ChatLog, type ChatMessage } from './chat-log.js';
import { MAX_COMMANDS, MAX_MESSAGE_LENGTH, WEB_CAPABILITIES } from './capabilities.js';
import { siteOf, type WebConfig, type WebSite } from './config.js';
import { findStored, sendStored, settleStored } from './delivery.js';
import { EventHub } from './event-hub.js';
import { handleRequest, loadPage, type PageAssets } from './http-server.js';
import { WebIdentities, type WebPerson } from './identities.js';
import { LIVE_INTERVAL_MS, LiveMessages, WebLiveAnswer } from './live-answer.js';
import { pageMessage, type PageEvent } from './page-events.js';
import { openWebDb, type WebDb } from './web-db.js';

export type WebAdapterOptions = {
  config: Pick<WebConfig, 'host' | 'port' | 'public_url' | 'session_days' | 'allow_from'>;
  /** hob's data_dir: web.db and the files live in its `web/` folder. */
  dataDir: string;
  logger?: AdapterLogger;
  /** Minimum milliseconds between redraws of a live answer (tests and benchmarks may change it). */
  liveIntervalMs?: number;
  /** How often open event streams check that their session still holds. */
  sessionCheckMs?: number;
};

export interface WebAdapter extends ChannelAdapter {
  /** The page's address: from the config, with the port actually bound once started. */
  readonly url: string;
}

/** Messages shown when a page opens. */
const SNAPSHOT_MESSAGES = 200;

export function createWebAdapter(options: WebAdapterOptions): WebAdapter {
  return new WebChannel(options);
}

/**
 * hob's own chat page. A person's chat is a direct chat whose id is their web user id; what
 * hob sends is stored (web.db) and pushed to that chat's open pages over Server-Sent Events;
 * what the page sends comes in over JSON POSTs checked for host, origin and session. One
 * adapter serves one start/stop cycle.
 */
class WebChannel implements WebAdapter {
  readonly platform = 'web';
  readonly capabilities = WEB_CAPABILITIES;
  private readonly logger: AdapterLogger;
  private readonly db: WebDb;
  private readonly identities: WebIdentities;
  private readonly chat: ChatLog;
  private readonly hub: EventHub;
  private readonly page: PageAssets;
  private site: WebSite;
  private server: Server | undefined;
  private sink: InboundSink | undefined;
  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private menus: { everyone: BotCommand[]; owners: { userIds: string[]; commands: BotCommand[] } } = { everyone: [], owners: { userIds: [], commands: [] } };
  private readonly lives: LiveMessages;

  constructor(private readonly options: WebAdapterOptions) {
    this.logger = options.logger ?? stderrLoggerOf('web');
    this.page = loadPage();
    // Open now: after a restart the gateway edits old approval prompts before the channels start.
    this.db = openWebDb(options.dataDir);
    this.identities = new WebIdentities(this.db);
    this.chat = new ChatLog(this.db, options.dataDir);
    this.hub = new EventHub((tokenHash) => this.identities.isLive(tokenHash), options.sessionCheckMs);
    this.lives = new LiveMessages(this.chat, this.hub);
    this.site = siteOf(options.config, options.config.port);
  }

  get url(): string {
    return this.site.baseUrl;
  }

  async start(sink: InboundSink): Promise<void> {
    if (this.state !== 'idle') throw new Error('this web adapter was already started');
    this.identities.sweep();
    const context = this.apiContext();
    const server = createServer((req, res) => void handleRequest(req, res, context, this.page));
    const { host, port } = this.options.config;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(error.code === 'EADDRINUSE' ? `the web chat cannot listen on ${host}:${port}: the port is in use (another hob, or another program); set channels.web.port to a free port` : `the web chat cannot listen on ${host}:${port}: ${error.message}; check channels.web.host and channels.web.port`)),
      );
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    this.site = siteOf(this.options.config, typeof address === 'object' && address ? address.port : port);
    this.server = server;
    this.sink = sink;
    this.state = 'running';
    this.logger.info({ url: this.site.baseUrl }, 'web chat listening');
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    const wasRunning = this.state === 'running';
    this.state = 'stopped';
    this.sink = undefined;
    this.hub.closeAll();
    if (wasRunning && this.server) {
      const server = this.server;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
    this.db.close();
  }

  async send(target: Target, message: OutboundMessage, options: SendOptions = {}): Promise<SentRef> {
    this.assertOpen();
    return sendStored(this.chat, this.post, target, message, options);
  }

  /** Answered from web.db by key: exact, whatever time has passed. */
  async findDelivered(target: Target, deliveries: UnconfirmedDelivery[]): Promise<Map<string, FoundDelivery>> {
    this.assertOpen();
    return findStored(this.chat, target, deliveries);
  }

  async settleLive(ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
    this.assertOpen();
    return settleStored(this.chat, this.post, (chatId, id) => this.hub.toChat(chatId, { type: 'delete', id }), ref, answer);
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    this.assertOpen();
    const text = message.text.length > MAX_MESSAGE_LENGTH ? `${message.text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : message.text;
    const edited = this.chat.update(ref.chatId, Number(ref.messageId), { text, plain: message.plain ?? false, buttons: message.buttons ?? [] });
    if (!edited) throw new Error(`web message ${ref.messageId} is not in chat ${ref.chatId}`);
    this.hub.toChat(ref.chatId, { type: 'message', message: pageMessage(edited) });
  }

  async typing(target: Target): Promise<void> {
    if (this.state === 'running') this.hub.toChat(target.chatId, { type: 'typing' });
  }

  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    if (this.state !== 'running') return undefined;
    return new WebLiveAnswer(this.lives, target, options, MAX_MESSAGE_LENGTH, this.options.liveIntervalMs ?? LIVE_INTERVAL_MS);
  }

  /** A web person's chat is named by their id. */
  async directTarget(userId: string): Promise<Target> {
    return { chatId: userId };
  }

  /** An uploaded file by its id (the gateway asks again after a restart). */
  download(ref: string): Promise<Buffer> {
    return this.chat.readFile(ref);
  }

  /** Each page's menu: everyone's commands, or the owners' superset on an owner's page. */
  async setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    this.menus = {
      everyone: everyone.slice(0, MAX_COMMANDS),
      owners: { userIds: owners?.userIds ?? [], commands: (owners?.commands ?? everyone).slice(0, MAX_COMMANDS) },
    };
    this.hub.toEach((chatId) => ({ type: 'commands', commands: this.menuFor(chatId) }));
  }

  private menuFor(chatId: string): BotCommand[] {
    return this.menus.owners.userIds.includes(chatId) ? this.menus.owners.commands : this.menus.everyone;
  }

  private readonly post = (stored: ChatMessage): SentRef => {
    this.hub.toChat(stored.chatId, { type: 'message', message: pageMessage(stored) });
    return { chatId: stored.chatId, messageId: String(stored.id) };
  };

  private assertOpen(): void {
    if (this.state === 'stopped') throw new Error('the web channel is stopped');
  }

  private snapshot(person: WebPerson): PageEvent {
    const messages = this.chat.recent(person.id, SNAPSHOT_MESSAGES).flatMap((message) => this.lives.asPage(message) ?? []);
    return { type: 'snapshot', me: person, messages, commands: this.menuFor(person.id) };
  }

  private apiContext(): WebApiContext {
    const adapter = this;
    return {
      // Known for sure once the server is bound (tests bind port 0).
      get site() {
        return adapter.site;
      },
      sessionDays: this.options.config.session_days,
      identities: this.identities,
      chat: this.chat,
      hub: this.hub,
      logger: this.logger,
      sink: () => this.sink,
      snapshot: (person) => this.snapshot(person),
      reserved: (id) => this.options.config.allow_from.includes(id),
      limits: { signIn: new RateLimit(30, 60_000), access: new RateLimit(5, 10 * 60_000) },
    };
  }
}
