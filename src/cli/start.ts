import { join } from 'node:path';
import { createApp, type App } from '../app.js';
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
import { SpokenAnswers } from '../voice/spoken-answers.js';
import { VoiceNotes } from '../voice/voice-notes.js';
import { errorMessage } from '../core/errors.js';
import { postgresUrl } from '../store/open.js';
import { sharedDecisionsOf } from '../store/postgres/shared-decisions.js';
import { runChat } from './chat.js';
import { consoleSessionKey, consoleUserId } from './console-identity.js';
import { channelChatCommands, configuredChannels, loadHobConfig, shadowedChatCommands, type ConfiguredChannel } from './channels.js';
import { claimSingleConsumers } from './single-consumers.js';
import { startHealth } from './health.js';
import type { HealthServer } from '../gateway/health.js';
import { UserFacingError } from '../core/errors.js';

/**
 * `hob start`: every configured chat channel through the gateway, plus the terminal when
 * no chat channel is configured (or `channels.console.enabled` says so).
 */
export async function runStart(configPath: string | undefined): Promise<void> {
  const { config, path } = loadHobConfig({ path: configPath });
  const configured = configuredChannels(config);
  // Before anything starts: a channel another process already receives is left out here.
  const claim = await claimSingleConsumers(configured, { dataDir: config.data_dir, store: config.store }, (sentence) => process.stderr.write(`${sentence}\n`));
  if (configured.length > 0 && claim.kept.length === 0) throw new UserFacingError(claim.refused.join('\n'));
  for (const sentence of claim.refused) process.stderr.write(`${sentence}\n`);
  const channels = claim.kept;
  // With chat channels, their first poll comes before loading the model SDK (warmUp below).
  const app = await createApp({ config, configPath: path, channel: 'a terminal', deferModelLoad: channels.length > 0 }).catch(async (error: unknown) => {
    await claim.release();
    throw error;
  });
  keepRunningThroughStrayErrors(app);
  reportExtensionProblems(app);
  for (const sentence of shadowedChatCommands(config)) {
    app.logger.warn(sentence);
    process.stderr.write(`${sentence}\n`);
  }
  const adapters = chatAdapters(channels, app);
  const gateway = adapters.length ? createGateway(app, adapters) : undefined;
  let scheduler: Scheduler | undefined;
  let stopDelivery: (() => Promise<void>) | undefined;
  let health: HealthServer | undefined;
  try {
    if (gateway) {
      await gateway.start();
      app.scheduling.setOwnerCheck((platform, userId) => gateway.access.isOwner(platform, userId));
      scheduler = app.scheduling.startRunner({ kick: drainer(gateway.delivery, app.store.outbox), engine: (key) => app.engine(key), logger: app.logger, fault: schedulerFault(), runner: app.cluster, isTrusted: (platform, userId) => platform === 'console' || gateway.access.isAllowedUser(platform, userId) });
      // issue 21: background tasks a restart cut off resume (or are reported) now, once.
      app.delegation.tasks.start({ kick: drainer(gateway.delivery, app.store.outbox), isTrusted: (platform, userId) => platform === 'console' || gateway.access.isAllowedUser(platform, userId) });
      app.warmUp();
      health = await startHealth(config, adapters, app.logger);
      const names = adapters.map((adapter) => `${adapter.platform}${adapter.botName ? ` as @${adapter.botName}` : ''}${adapter.url ? ` at ${adapter.url}` : ''}`).join(', ');
      const healthAt = health ? ` Health: http://${config.health?.host}:${health.address.port}/healthz.` : '';
      process.stderr.write(`hob is running on ${names}.${healthAt} Press Ctrl-C to stop.\n`);
    }
    if (config.channels.console.enabled && (process.stdin.isTTY || !gateway)) {
      // Reminders made in the terminal arrive in it (through the outbox, like any chat's).
      const delivery = gateway?.delivery ?? new Delivery(app.store.outbox, systemClock, app.logger);
      delivery.register(consoleOutlet());
      if (!gateway) {
        delivery.start(1000);
        scheduler = app.scheduling.startRunner({ kick: drainer(delivery, app.store.outbox), engine: (key) => app.engine(key), logger: app.logger, fault: schedulerFault() });
        app.delegation.tasks.start({ kick: drainer(delivery, app.store.outbox) });
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
        tasks: app.delegation.tasks,
      });
    } else if (gateway) {
      await untilSignal();
    }
  } finally {
    // A balancer stops sending here first.
    await health?.close();
    await scheduler?.stop();
    await stopDelivery?.();
    await gateway?.stop();
    await claim.release();
    await app.close();
  }
}

/**
 * One adapter per configured channel, each loading its SDK in the background (only when that
 * channel is configured, so hob without a channel never pays for its SDK): the gateway
 * starts each channel as soon as its own SDK is in.
 */
function chatAdapters(channels: ConfiguredChannel[], app: App): ChannelAdapter[] {
  return channels.map(
    ({ module, section }) =>
      new DeferredAdapter(module.name, module.capabilities, () =>
        module.create(section, {
          logger: app.logger.child({ platform: module.name }),
          dataDir: app.config.data_dir,
          notice: (sentence) => process.stderr.write(`${sentence}\n`),
        }),
      ),
  );
}

export function createGateway(app: App, adapters: ChannelAdapter[]): Gateway {
  const { config } = app;
  const access = new Map(configuredChannels(config).map(({ module, section }) => [module.name, module.access(section)]));
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
    busyAfterMs: config.gateway.busy_after_ms,
    model: { current: () => app.deps.provider.model, switch: async (name) => app.switchModel(name) },
    permissions: app.permissionAdmin,
    memory: app.memory,
    jobs: app.scheduling.access,
    tasks: app.delegation.tasks,
    people: app.memory.people,
    extensions: app.extensions,
    channelCommands: channelChatCommands(config),
    delivery: { fault: faultFromEnv<DeliveryFault>('delivery') },
    cluster: app.cluster,
    // issue 22: without a voice section a voice note gets the sentence naming voice.base_url.
    voice: { notes: new VoiceNotes(config.voice), answers: new SpokenAnswers(config.voice), spokenDir: join(config.data_dir, 'spoken') },
    // issue 23: on PostgreSQL a press may reach this process for a run waiting in another.
    sharedDecisions: sharedDecisionsOf(app.store, () => postgresUrl({ dataDir: config.data_dir, store: config.store }), (error) =>
      app.logger.warn({ err: errorMessage(error) }, 'approvals and questions from other processes: the notices connection failed; it reconnects'),
    ),
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
