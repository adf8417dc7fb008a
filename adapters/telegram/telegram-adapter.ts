import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { autoRetry } from '@grammyjs/auto-retry';
import { Api, Bot, HttpError } from 'grammy';
import { leanBodyFetch } from '../../src/core/lean-fetch.js';
import { whenIdle } from '../../src/core/when-idle.js';
import type {
  BotCommand, ChannelAdapter, InboundSink, LiveAnswer, LiveAnswerOptions, OutboundMessage, SendOptions, SentRef, Target,
} from '../../src/gateway/channel.js';
import { CallbackAnswers } from './callback-answers.js';
import { setCommandMenu } from './command-menu.js';
import { TelegramDrafts } from './drafts.js';
import { loadMarkdown } from './html.js';
import { stderrLogger, type TelegramLogger } from './logger.js';
import { LongPolling, pollFailureLogger, type UpdateKinds } from './long-polling.js';
import { normalizeCallback, normalizeMessage, type BotIdentity } from './normalize.js';
import { describeError, TelegramOutbound } from './outbound.js';
import { TELEGRAM_CAPABILITIES } from './capabilities.js';
import { closeServer, startWebhookServer } from './webhook-server.js';

export type { TelegramLogger } from './logger.js';

export type TelegramAdapterOptions = {
  token: string;
  /** Bot API root without a trailing slash (a local Bot API server, a proxy, a test fake). */
  apiRoot?: string;
  /** Receive updates by webhook instead of long polling. `url` must be https (Telegram's rule). */
  webhook?: { url: string; secretToken: string; port: number; host: string };
  logger?: TelegramLogger;
  /** A 429 asking to wait longer than this is not waited out but thrown (the outbox retries). */
  autoRetryMaxDelaySeconds?: number;
  /** How long the gateway has to answer a button press before the adapter answers it empty. */
  callbackAnswerTimeoutMs?: number;
  /** Pause before polling again after polling stopped on an unrecoverable error (401, 409). */
  pollRestartDelayMs?: number;
  /** Minimum milliseconds between updates of an answer's draft in a DM (default 500). */
  draftIntervalMs?: number;
  /** Tells the person running hob something to act on now (another process polls this bot). */
  notice?(sentence: string): void;
};

export interface TelegramAdapter extends ChannelAdapter {
  /** Where the webhook server listens once started in webhook mode (port 0 picks a free one). */
  readonly webhookAddress: AddressInfo | undefined;
}

export { TELEGRAM_CAPABILITIES };

// stopped_message_generation: the person pressed stop on a draft.
const ALLOWED_UPDATES: UpdateKinds = ['message', 'edited_message', 'callback_query', 'stopped_message_generation'];

export function createTelegramAdapter(options: TelegramAdapterOptions): TelegramAdapter {
  return new TelegramChannel(options);
}

/**
 * The Telegram side of hob, on grammy. Updates are handled concurrently (@grammyjs/runner):
 * the handlers only normalise and hand over to the sink, which only enqueues, so no chat
 * waits on another. An edited message arrives as a new InboundMessage with the same
 * messageId, its own updateId and editedAfterSeconds. One adapter serves one start/stop cycle.
 */
class TelegramChannel implements TelegramAdapter {
  readonly platform = 'telegram';
  readonly capabilities = TELEGRAM_CAPABILITIES;
  private readonly bot: Bot;
  private readonly apiRoot: string;
  private readonly logger: TelegramLogger;
  private readonly outbound: TelegramOutbound;
  private readonly answers: CallbackAnswers;
  private readonly drafts: TelegramDrafts;
  /** Calls off the Markdown walk's load in hob's first idle moment (start), if it has not come. */
  private cancelMarkdownLoad = (): void => undefined;
  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private sink: InboundSink | undefined;
  private readonly polling: LongPolling;
  private server: http.Server | undefined;

  constructor(private readonly options: TelegramAdapterOptions) {
    this.apiRoot = options.apiRoot ?? 'https://api.telegram.org';
    this.logger = options.logger ?? stderrLogger;
    // Its calls through node:http (core/lean-fetch.ts), not grammy's node-fetch: a JSON call
    // as one write with its length, a file upload's multipart stream chunked as node-fetch sent
    // it, and the answer's JSON read from the socket (grammy reads nothing else of it).
    const client = { apiRoot: this.apiRoot, fetch: leanBodyFetch() };
    this.bot = new Bot(options.token, { client });
    // Network errors are thrown, not retried here: auto-retry would retry them without limit,
    // and a send whose answer was lost may have arrived (the outbox decides).
    this.bot.api.config.use(
      autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: options.autoRetryMaxDelaySeconds ?? 10, rethrowHttpErrors: true }),
    );
    this.bot.api.config.use(pollFailureLogger(this.logger, () => (this.polling.conflict = undefined)));
    this.outbound = new TelegramOutbound(this.bot.api, this.logger);
    // Drafts get a client of their own without auto-retry: a 429 skips a preview, never delays the answer.
    this.drafts = new TelegramDrafts(new Api(options.token, client), this.logger, options.draftIntervalMs ?? 500);
    this.answers = new CallbackAnswers(
      (queryId, text) => this.bot.api.answerCallbackQuery(queryId, text !== undefined ? { text } : {}),
      options.callbackAnswerTimeoutMs ?? 3000,
      this.logger,
    );
    this.polling = new LongPolling(this.bot, this.logger, ALLOWED_UPDATES, options.pollRestartDelayMs ?? 5000, (sentence) => options.notice?.(sentence));
    this.installHandlers();
  }

  get botName(): string | undefined {
    return this.bot.isInited() ? this.bot.botInfo.username : undefined;
  }

  /** Cut off by another poller of this bot (409), until Telegram answers a poll of ours again. */
  get down(): string | undefined {
    return this.polling.conflict;
  }

  get webhookAddress(): AddressInfo | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address : undefined;
  }

  async start(sink: InboundSink): Promise<void> {
    if (this.state !== 'idle') throw new Error('this Telegram adapter was already started');
    this.state = 'running';
    this.sink = sink;
    const webhook = this.options.webhook;
    try {
      if (webhook) {
        await this.bot.init();
        this.server = await startWebhookServer(this.bot, { host: webhook.host, port: webhook.port, secretToken: webhook.secretToken }, this.logger);
        await this.bot.api.setWebhook(webhook.url, { secret_token: webhook.secretToken, allowed_updates: [...ALLOWED_UPDATES] });
      } else {
        // A webhook left from an earlier setup would make every getUpdates fail with 409.
        // One signal for both: when either fails, the other stops retrying too (a request
        // left retrying would keep hob alive after it said it failed).
        const abort = new AbortController();
        // grammy types its signal with the abort-controller polyfill; Node's is the same object.
        const signal = abort.signal as Parameters<Bot['init']>[0];
        await Promise.all([this.bot.init(signal), this.bot.api.deleteWebhook(undefined, signal)]).catch((error: unknown) => {
          abort.abort();
          throw error;
        });
        this.polling.start();
      }
    } catch (error) {
      await this.stop();
      // A network failure names where hob looked, so the fix is obvious.
      if (error instanceof HttpError) throw new Error(`Telegram is not reachable at ${this.apiRoot} (${error.message}). Check the network, or channels.telegram.api_root.`);
      throw error;
    }
    this.logger.info({ bot: this.botName, mode: webhook ? 'webhook' : 'polling' }, 'telegram adapter started');
    // Not on the way to the first answers (a plain one never needs it), but before most Markdown.
    this.cancelMarkdownLoad = whenIdle(() => void loadMarkdown().catch(() => undefined));
  }

  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    this.cancelMarkdownLoad();
    // Waits for handlers still running; they only enqueue, so this is quick.
    await this.polling.stop();
    if (this.server) await closeServer(this.server);
    await this.answers.flush();
  }

  send(target: Target, message: OutboundMessage, options?: SendOptions): Promise<SentRef> {
    return this.outbound.send(target, message, options);
  }

  edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    return this.outbound.edit(ref, message);
  }

  typing(target: Target): Promise<void> {
    return this.outbound.typing(target);
  }

  /** A draft with a stop button, in private chats only (Telegram has no drafts in groups). */
  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    if (options.chatType !== 'dm' || !/^\d+$/.test(target.chatId)) return undefined;
    return this.drafts.start({ chatId: Number(target.chatId), ...(target.threadId !== undefined ? { threadId: Number(target.threadId) } : {}) });
  }

  async directTarget(userId: string): Promise<Target | undefined> {
    // A private chat's id is the user's id.
    return { chatId: userId };
  }

  /** The command menu: `everyone` in every chat, `owners.commands` in each owner's DM (command-menu.ts). */
  setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    return setCommandMenu(this.bot.api, this.logger, everyone, owners);
  }

  private installHandlers(): void {
    this.bot.use(this.polling.track);
    this.bot.on(['message', 'edited_message'], (ctx) => {
      const inbound = normalizeMessage(ctx.msg, ctx.update.update_id, this.identity(), this.download);
      if (inbound) this.sink?.message(inbound);
    });
    // The stop button on a draft acts as /stop in that chat, while that draft is being written.
    this.bot.on('stopped_message_generation', (ctx) => {
      const stopped = ctx.update.stopped_message_generation;
      const place = this.drafts.stopPressed(stopped.chat.id, stopped.draft_id);
      if (!place) {
        this.logger.info({ updateId: ctx.update.update_id }, 'telegram stop pressed on a draft that is no longer written; ignored');
        return;
      }
      this.sink?.message({
        platform: this.platform,
        chatId: String(stopped.chat.id),
        // The conversation the draft belongs to, as the gateway named it.
        ...(place.threadId !== undefined ? { threadId: String(place.threadId) } : {}),
        userId: String(stopped.chat.id),
        userName: [stopped.chat.first_name, stopped.chat.last_name].filter(Boolean).join(' ') || 'the person',
        chatType: 'dm',
        text: '/stop',
        attachments: [],
        mentionsBot: false,
        replyToBot: false,
        messageId: `draft-${stopped.draft_id}`,
        updateId: String(ctx.update.update_id),
      });
    });
    this.bot.on('callback_query', async (ctx) => {
      const answer = this.answers.track(ctx.callbackQuery.id);
      const press = normalizeCallback(ctx.callbackQuery, answer);
      if (press) this.sink?.button(press);
      else await answer();
    });
    // Whatever a handler throws is logged; polling and the webhook keep going.
    this.bot.catch((error) => {
      this.logger.error({ updateId: error.ctx.update.update_id, ...describeError(error.error) }, 'telegram update handler failed');
    });
  }

  private identity(): BotIdentity {
    return { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
  }

  /** A file's bytes by Telegram file_id (getFile, then the file endpoint). */
  readonly download = async (fileId: string): Promise<Buffer> => {
    const file = await this.bot.api.getFile(fileId);
    if (!file.file_path) throw new Error('Telegram gave no download path for this file');
    let response: Response;
    try {
      response = await fetch(`${this.apiRoot}/file/bot${this.options.token}/${file.file_path}`);
    } catch (error) {
      // Never the URL in the message: it carries the bot token.
      throw new Error(`Telegram file download failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!response.ok) throw new Error(`Telegram file download failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  };
}
