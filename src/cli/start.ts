import { DISCORD_CAPABILITIES } from '../../adapters/discord/capabilities.js';
import { SLACK_CAPABILITIES } from '../../adapters/slack/capabilities.js';
import { TELEGRAM_CAPABILITIES } from '../../adapters/telegram/capabilities.js';
import { createApp, type App } from '../app.js';
import { loadConfig } from '../config/load.js';
import type { HobConfig } from '../config/schema.js';
import { systemClock } from '../core/clock.js';
import type { ChannelAdapter } from '../gateway/channel.js';
import { DeferredAdapter } from '../gateway/deferred-adapter.js';
import { Delivery } from '../gateway/delivery.js';
import { Gateway } from '../gateway/gateway.js';
import { consoleOutlet } from './console-outlet.js';
import { faultFromEnv } from '../core/fault.js';
import type { DeliveryFault } from '../gateway/delivery-ports.js';
import { drainer, faultFromEnv as schedulerFault } from '../scheduler/index.js';
import type { Scheduler } from '../scheduler/runner.js';
import { runChat } from './chat.js';
import { consoleSessionKey, consoleUserId } from './console-identity.js';

/**
 * `hob start`: every configured chat channel through the gateway, plus the terminal when
 * no chat channel is configured (or `channels.console.enabled` says so).
 */
export async function runStart(configPath: string | undefined): Promise<void> {
  const { config, path } = loadConfig({ path: configPath });
  // With chat channels, their first poll comes before loading the model SDK (warmUp below).
  const app = await createApp({ config, configPath: path, channel: 'a terminal', deferModelLoad: hasChatChannels(config) });
  keepRunningThroughStrayErrors(app);
  reportExtensionProblems(app);
  const adapters = chatAdapters(config, app);
  const gateway = adapters.length ? createGateway(app, adapters) : undefined;
  let scheduler: Scheduler | undefined;
  let stopDelivery: (() => Promise<void>) | undefined;
  try {
    if (gateway) {
      await gateway.start();
      app.scheduling.setOwnerCheck((platform, userId) => gateway.access.isOwner(platform, userId));
      scheduler = app.scheduling.startRunner({ kick: drainer(gateway.delivery, app.store.outbox), engine: (key) => app.engine(key), logger: app.logger, fault: schedulerFault(), isTrusted: (platform, userId) => platform === 'console' || gateway.access.isAllowedUser(platform, userId) });
      app.warmUp();
      const names = adapters.map((adapter) => `${adapter.platform}${adapter.botName ? ` as @${adapter.botName}` : ''}`).join(', ');
      process.stderr.write(`hob is running on ${names}. Press Ctrl-C to stop.\n`);
    }
    if (config.channels.console.enabled && (process.stdin.isTTY || !gateway)) {
      // Reminders made in the terminal arrive in it (through the outbox, like any chat's).
      const delivery = gateway?.delivery ?? new Delivery(app.store.outbox, systemClock, app.logger);
      delivery.register(consoleOutlet());
      if (!gateway) {
        delivery.start(1000);
        scheduler = app.scheduling.startRunner({ kick: drainer(delivery, app.store.outbox), engine: (key) => app.engine(key), logger: app.logger, fault: schedulerFault() });
        stopDelivery = () => delivery.stop();
      }
      await runChat({
        engine: app.engine(consoleSessionKey()),
        userId: consoleUserId(),
        logger: app.logger,
        approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
        permissions: app.permissionAdmin,
        memory: app.memory,
        extensions: app.extensions,
        jobs: app.scheduling.access,
        archive: app.store.archive,
      });
    } else if (gateway) {
      await untilSignal();
    }
  } finally {
    await scheduler?.stop();
    await stopDelivery?.();
    await gateway?.stop();
    await app.close();
  }
}

function hasChatChannels(config: HobConfig): boolean {
  return Boolean(config.channels.telegram || config.channels.slack || config.channels.discord);
}

/**
 * One adapter per configured channel, each loading its SDK in the background (only when that
 * channel is configured, so hob without Discord never pays for discord.js): the gateway
 * starts each channel as soon as its own SDK is in.
 */
function chatAdapters(config: HobConfig, app: App): ChannelAdapter[] {
  const { telegram, slack, discord } = config.channels;
  const adapters: ChannelAdapter[] = [];
  if (telegram) {
    adapters.push(
      new DeferredAdapter('telegram', TELEGRAM_CAPABILITIES, async () => {
        const { createTelegramAdapter } = await import('../../adapters/telegram/telegram-adapter.js');
        return createTelegramAdapter({
          token: telegram.token,
          apiRoot: telegram.api_root,
          webhook: telegram.webhook ? { url: telegram.webhook.url, secretToken: telegram.webhook.secret_token, port: telegram.webhook.port, host: telegram.webhook.host } : undefined,
          logger: app.logger.child({ platform: 'telegram' }),
        });
      }),
    );
  }
  if (slack) {
    adapters.push(
      new DeferredAdapter('slack', SLACK_CAPABILITIES, async () => {
        const { createSlackAdapter } = await import('../../adapters/slack/slack-adapter.js');
        return createSlackAdapter({
          botToken: slack.bot_token,
          appToken: slack.app_token,
          http: slack.app_token === undefined && slack.signing_secret !== undefined ? { signingSecret: slack.signing_secret, port: slack.port, host: slack.host } : undefined,
          apiUrl: slack.api_url,
          serverPingTimeoutMs: slack.socket_timeout_seconds * 1000,
          logger: app.logger.child({ platform: 'slack' }),
        });
      }),
    );
  }
  if (discord) {
    adapters.push(
      new DeferredAdapter('discord', DISCORD_CAPABILITIES, async () => {
        const { createDiscordAdapter } = await import('../../adapters/discord/discord-adapter.js');
        return createDiscordAdapter({
          token: discord.token,
          apiUrl: discord.api_url,
          allowedGuilds: discord.allowed_guilds,
          logger: app.logger.child({ platform: 'discord' }),
          onFatal: (sentence) => process.stderr.write(`${sentence}\n`),
        });
      }),
    );
  }
  return adapters;
}

export function createGateway(app: App, adapters: ChannelAdapter[]): Gateway {
  const { config } = app;
  const access = new Map<string, { allowFrom: string[]; allowedGroups: string[] }>();
  if (config.channels.telegram) access.set('telegram', { allowFrom: config.channels.telegram.allow_from, allowedGroups: config.channels.telegram.allowed_groups });
  if (config.channels.slack) access.set('slack', { allowFrom: config.channels.slack.allow_from, allowedGroups: config.channels.slack.allowed_channels });
  // Discord ids are unique across guilds and channels, so one list holds both.
  if (config.channels.discord) access.set('discord', { allowFrom: config.channels.discord.allow_from, allowedGroups: [...config.channels.discord.allowed_guilds, ...config.channels.discord.allowed_channels] });
  return new Gateway({
    store: app.store,
    clock: systemClock,
    logger: app.logger,
    adapters,
    access,
    engine: (key) => app.engine(key),
    workspace: config.tools.workspace,
    busyMode: config.gateway.busy_mode,
    groupSessions: config.gateway.group_sessions,
    maxQueue: config.gateway.max_queue,
    maxConversations: config.gateway.max_conversations,
    idleTimeoutSeconds: config.gateway.idle_timeout_seconds,
    approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
    pairingTtlSeconds: config.gateway.pairing_code_ttl_seconds,
    model: { current: () => app.deps.provider.model, switch: async (name) => app.switchModel(name) },
    permissions: app.permissionAdmin,
    memory: app.memory,
    jobs: app.scheduling.access,
    people: app.memory.people,
    extensions: app.extensions,
    delivery: { fault: faultFromEnv<DeliveryFault>('delivery') },
  });
}

/**
 * The last net: an error nothing caught (a rejected promise no one awaited, a throw in a
 * timer) is logged with its stack and hob keeps serving every other chat.
 */
function keepRunningThroughStrayErrors(app: App): void {
  process.on('unhandledRejection', (reason) => app.logger.error({ err: reason }, 'unhandled rejection (hob keeps running)'));
  process.on('uncaughtException', (error) => app.logger.error({ err: error }, 'uncaught exception (hob keeps running)'));
}

/** Broken plugins and skills now; MCP servers that fail once they have tried (never waited for). */
function reportExtensionProblems(app: App): void {
  for (const problem of app.extensions.problems) process.stderr.write(`${problem}\n`);
  void app.extensions.mcp.ready().then(() => {
    for (const server of app.extensions.mcp.status()) {
      if (server.state === 'failed') process.stderr.write(`MCP server ${server.name} failed to start and is skipped: ${server.error ?? 'unknown reason'}\n`);
    }
  });
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
