import { Client, Events, GatewayIntentBits, Partials, Routes, type Interaction, type Message } from 'discord.js';
import type {
  BotCommand, ChannelAdapter, FoundDelivery, InboundSink, LiveAnswer, LiveAnswerOptions, OutboundMessage, SendOptions, SentRef, Target,
  UnconfirmedDelivery,
} from '../../src/gateway/channel.js';
import { leanBodyFetch } from '../../src/core/lean-fetch.js';
import { stderrLoggerOf } from '../logger.js';
import { cacheLimits } from './cache-limits.js';
import { fatalSentence, isFatalCloseCode } from './fatal.js';
import { registerCommands } from './command-menu.js';
import { buttonPress, commandMessage } from './interactions.js';
import { discordLiveAnswer, LIVE_EDIT_INTERVAL_MS } from './live-answer.js';
import { normalizeMessage } from './normalize.js';
import { describeError, DiscordOutbound, type DiscordLogger } from './outbound.js';
import { findDelivered, settleLive } from './recovery.js';
import { DISCORD_CAPABILITIES } from './capabilities.js';

export type { DiscordLogger } from './outbound.js';

export type DiscordAdapterOptions = {
  token: string;
  /** REST base without the version (`https://discord.com/api`); the gateway URL then comes from `GET /gateway/bot`. */
  apiUrl?: string;
  /** Guilds whose members may all talk to hob; their application commands are registered there (instantly). */
  allowedGuilds?: string[];
  /** The gateway shards this process runs (`ids`) of all processes' `count`; absent: the one shard. */
  shards?: { ids: number[]; count: number };
  logger?: DiscordLogger;
  /** Minimum milliseconds between edits of a live answer (tests shorten it). */
  liveEditIntervalMs?: number;
  /** How long a command waits for the gateway's answer before its "thinking" placeholder is removed. */
  commandSilenceMs?: number;
  /** How long start waits for READY before giving up. */
  readyTimeoutMs?: number;
  /**
   * Told once, in one sentence naming the fix, when Discord refuses hob for good (bad token,
   * disallowed intents): the Discord channel stops, the other channels keep running.
   */
  onFatal?(sentence: string): void;
};

export interface DiscordAdapter extends ChannelAdapter {
  /** Why the channel stopped for good, when it did. */
  readonly failure: string | undefined;
  /** The bot's user id, known after READY (people mention it as `<@id>`). */
  readonly botId: string | undefined;
}

export { DISCORD_CAPABILITIES };

/** Interactions remembered to handle each once (a replayed dispatch must not press twice). */
const SEEN_INTERACTIONS = 500;

/** A bot token's first part is the bot's user id in base64. */
function botIdOf(token: string): string {
  return Buffer.from(token.split('.')[0] ?? '', 'base64').toString('utf8');
}

export function createDiscordAdapter(options: DiscordAdapterOptions): DiscordAdapter {
  return new DiscordChannel(options);
}

/**
 * The Discord side of hob, on discord.js: DMs (through the partial DM channel), server
 * channels when mentioned or replied to, threads as their own conversations, buttons as
 * message components, commands as application commands answered privately. discord.js
 * resumes a dropped gateway connection itself (RESUME with session and sequence, so no event
 * is lost) and re-identifies after an invalid session; a close Discord will never accept
 * again stops only this channel, with a sentence naming the fix. One adapter serves one
 * start/stop cycle.
 */
class DiscordChannel implements DiscordAdapter {
  readonly platform = 'discord';
  readonly capabilities = DISCORD_CAPABILITIES;
  failure: string | undefined;
  private readonly client: Client;
  private readonly logger: DiscordLogger;
  private readonly outbound: DiscordOutbound;
  private readonly dmChannels = new Map<string, string>();
  private readonly seenInteractions = new Set<string>();
  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private sink: InboundSink | undefined;

  constructor(private readonly options: DiscordAdapterOptions) {
    this.logger = options.logger ?? stderrLoggerOf('discord');
    this.client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
      // Without the partial DM channel, discord.js drops a DM from someone it has not cached;
      // without partial messages it drops edits of messages it did not keep (it keeps none).
      partials: [Partials.Channel, Partials.Message],
      // Not discord.js's own undici: another library's undici (Slack's Socket Mode, in the same
      // process) makes itself the process's dispatcher when it loads, and that one cannot send
      // discord.js's own form data (file uploads failed). JSON calls go out through node:http
      // (lean-fetch.ts: half the CPU of fetch), their answers read whole without Node's own
      // undici (REST reads status, headers and the JSON), uploads through the global fetch.
      rest: { api: options.apiUrl ?? 'https://discord.com/api', makeRequest: leanBodyFetch() },
      // Several processes split the shards; ClientReady then waits for every shard of this one.
      ...(options.shards ? { shards: options.shards.ids, shardCount: options.shards.count } : {}),
      allowedMentions: { parse: [], repliedUser: false },
      // hob reads each message once; keeping them (and presences, reactions) only costs memory.
      makeCache: cacheLimits(),
    });
    // REST works before login: a restart closes old approval prompts before the channels start.
    this.client.rest.setToken(options.token);
    this.outbound = new DiscordOutbound(this.client.rest, this.logger);
    this.installHandlers();
  }

  get botName(): string | undefined {
    return this.client.user?.username;
  }

  get botId(): string | undefined {
    return this.client.user?.id;
  }

  /** Stopped for good: the sentence naming the fix. A dropped connection discord.js resumes is not down. */
  get down(): string | undefined {
    return this.failure;
  }

  async start(sink: InboundSink): Promise<void> {
    if (this.state !== 'idle') throw new Error('this Discord adapter was already started');
    this.state = 'running';
    this.sink = sink;
    const outcome = await new Promise<{ ready: true } | { fatal: string }>((resolve) => {
      const settle = (result: { ready: true } | { fatal: string }) => {
        clearTimeout(timer);
        // From now on a fatal close stops the running channel.
        this.fatalListener = undefined;
        resolve(result);
      };
      const seconds = Math.round((this.options.readyTimeoutMs ?? 30_000) / 1000);
      const timer = setTimeout(() => settle({ fatal: `Discord did not finish connecting within ${seconds} s; check channels.discord.api_url and the network, then restart hob. The Discord channel is stopped; the other channels keep running.` }), this.options.readyTimeoutMs ?? 30_000);
      timer.unref();
      this.client.once(Events.ClientReady, () => settle({ ready: true }));
      this.fatalListener = (sentence) => settle({ fatal: sentence });
      this.client.login(this.options.token).catch((error: unknown) => this.fatal(fatalSentence({ error })));
    });
    if ('fatal' in outcome) {
      this.stopForGood(outcome.fatal);
      return;
    }
    this.logger.info({ bot: this.botName, ...(this.options.shards ? { shards: this.options.shards.ids, shardCount: this.options.shards.count } : {}) }, 'discord adapter started');
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    await this.client.destroy();
  }

  async send(target: Target, message: OutboundMessage, options?: SendOptions): Promise<SentRef> {
    this.assertUsable();
    return this.outbound.send(target, message, options);
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    this.assertUsable();
    return this.outbound.edit(ref, message);
  }

  async typing(target: Target): Promise<void> {
    if (this.failure === undefined) await this.outbound.typing(target);
  }

  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    if (this.failure !== undefined || this.state !== 'running') return undefined;
    return discordLiveAnswer(this.outbound, target, options, this.logger, this.options.liveEditIntervalMs ?? LIVE_EDIT_INTERVAL_MS);
  }

  async settleLive(ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
    this.assertUsable();
    return settleLive(this.outbound, ref, answer);
  }

  async findDelivered(target: Target, deliveries: UnconfirmedDelivery[], known: ReadonlySet<string>): Promise<Map<string, FoundDelivery>> {
    this.assertUsable();
    // The bot's id is in its token (REST works before the gateway is up, so this runs at start-up too).
    return findDelivered(this.outbound, this.client.user?.id ?? botIdOf(this.options.token), target, deliveries, known);
  }

  /** A person's DM channel (opened once, then remembered). */
  async directTarget(userId: string): Promise<Target | undefined> {
    if (!/^\d+$/.test(userId)) return undefined;
    let channelId = this.dmChannels.get(userId);
    if (channelId === undefined) {
      const channel = (await this.client.rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as { id: string };
      channelId = channel.id;
      this.dmChannels.set(userId, channelId);
    }
    return { chatId: channelId };
  }

  /** An attachment's bytes by its CDN url (the ref kept in the inbox). */
  readonly download = async (url: string): Promise<Buffer> => {
    if (!/^https?:\/\//.test(url)) throw new Error('not a Discord attachment url');
    const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    if (!response.ok) throw new Error(`Discord attachment download failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  };

  /**
   * Application commands by bulk overwrite, in each allowed guild and globally for DMs
   * (command-menu.ts). The menu is the bot's, not a shard's: with several processes only the
   * one that runs shard 0 writes it, so a restart of the others costs no overwrites.
   */
  async setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    const applicationId = this.client.application?.id;
    if (!applicationId || this.failure !== undefined) return;
    if (this.options.shards && !this.options.shards.ids.includes(0)) return;
    await registerCommands(this.client.rest, applicationId, this.options.allowedGuilds ?? [], this.logger, everyone, owners);
  }

  private fatalListener: ((sentence: string) => void) | undefined;

  private fatal(sentence: string): void {
    if (this.fatalListener) {
      const listener = this.fatalListener;
      this.fatalListener = undefined;
      listener(sentence);
    } else {
      this.stopForGood(sentence);
    }
  }

  private stopForGood(sentence: string): void {
    if (this.failure !== undefined) return;
    this.failure = sentence;
    this.state = 'stopped';
    this.logger.error({ channel: 'discord' }, sentence);
    this.options.onFatal?.(sentence);
    void this.client.destroy();
  }

  private assertUsable(): void {
    if (this.failure !== undefined) throw new Error(`the Discord channel is stopped: ${this.failure}`);
  }

  private installHandlers(): void {
    this.client.on(Events.MessageCreate, (message) => this.onMessage(message));
    this.client.on(Events.MessageUpdate, (_old, updated) => {
      if (!updated.partial) this.onEdit(updated);
    });
    this.client.on(Events.InteractionCreate, (interaction) => this.onInteraction(interaction));
    this.client.on(Events.ShardDisconnect, ({ code }) => {
      if (isFatalCloseCode(code)) this.fatal(fatalSentence({ code }));
    });
    this.client.on(Events.ShardResume, (_shard, replayed) => this.logger.info({ replayed }, 'discord connection resumed'));
    this.client.on(Events.ShardReconnecting, () => this.logger.info({}, 'discord connection dropped; reconnecting'));
    // An 'error' nobody listens to would throw out of discord.js's emitter.
    this.client.on(Events.Error, (error) => this.logger.error(describeError(error), 'discord client error'));
    this.client.on(Events.ShardError, (error) => this.logger.warn(describeError(error), 'discord connection error'));
  }

  private onMessage(message: Message): void {
    if (this.state !== 'running') return;
    try {
      const inbound = normalizeMessage(message, this.client.user?.id ?? '', this.download);
      if (inbound) this.sink?.message(inbound);
    } catch (error) {
      this.logger.error({ message: message.id, ...describeError(error) }, 'discord message handler failed');
    }
  }

  /**
   * An edited message, answered as a correction like on Telegram (the gateway leaves late
   * edits alone). Updates without an edit time are Discord adding link previews or pins.
   */
  private onEdit(message: Message): void {
    const editedAt = message.editedTimestamp;
    if (this.state !== 'running' || editedAt === null) return;
    try {
      const inbound = normalizeMessage(message, this.client.user?.id ?? '', this.download);
      if (!inbound) return;
      // One update per edit: a pin re-sends the same edit time and is handled once.
      this.sink?.message({ ...inbound, updateId: `e${message.id}:${editedAt}`, editedAfterSeconds: Math.max(0, Math.round((editedAt - message.createdTimestamp) / 1000)) });
    } catch (error) {
      this.logger.error({ message: message.id, ...describeError(error) }, 'discord edit handler failed');
    }
  }

  private onInteraction(interaction: Interaction): void {
    if (this.state !== 'running') return;
    if (this.seenInteractions.has(interaction.id)) return;
    this.seenInteractions.add(interaction.id);
    if (this.seenInteractions.size > SEEN_INTERACTIONS) this.seenInteractions.delete(this.seenInteractions.values().next().value as string);
    try {
      if (interaction.isButton()) this.sink?.button(buttonPress(interaction, this.logger));
      else if (interaction.isChatInputCommand()) this.sink?.message(commandMessage(interaction, this.logger, this.options.commandSilenceMs ?? 10_000));
    } catch (error) {
      this.logger.error({ interaction: interaction.id, ...describeError(error) }, 'discord interaction handler failed');
    }
  }
}
