import { join } from 'node:path';
import { createApp, type App } from '../app.js';
import { systemClock } from '../core/clock.js';
import type { ChannelAdapter } from '../gateway/channel.js';
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
import { postgresUrl } from '../store/settings.js';
import type { SharedDecisions } from '../store/shared-decisions.js';
import { channelChatCommands, configuredChannels } from '../app/channels.js';
import { shadowedChatCommands } from './shadowed-commands.js';
import { startHealth } from './health.js';
import type { HealthServer } from '../gateway/health.js';
import type { HobConfig } from '../config/schema.js';
import { flushLog, type Logger } from '../logger.js';

/** What `hob start` (start.ts) hands on once its channels are connecting. */
export type ServeOptions = {
  config: HobConfig;
  configPath: string | undefined;
  logger: Logger;
  /** The configured chat channels, connecting or connected, their inbound held until the gateway starts them. */
  adapters: ChannelAdapter[];
  /** Lets go of the channels only one process may receive (at stop). */
  release(): Promise<void>;
};

/**
 * The rest of `hob start`, built while the channels connect: the app, the gateway over the
 * channels (its start recovers what a restart left, then takes what the channels held), the
 * scheduler and the health endpoint; then serves until a signal. Whatever happens, everything
 * it was handed is closed when it returns or throws: the channels, the claim, the log.
 */
export async function serve({ config, configPath, logger, adapters, release }: ServeOptions): Promise<void> {
  let app: App | undefined;
  let gateway: Gateway | undefined;
  let scheduler: Scheduler | undefined;
  let stopDelivery: (() => Promise<void>) | undefined;
  let health: HealthServer | undefined;
  try {
    // With chat channels, bwrap's check runs in the background and is logged by warmUp below.
    const built = (app = await createApp({ config, configPath, channel: 'a terminal', serving: adapters.length > 0, logger }));
    reportExtensionProblems(built);
    for (const sentence of shadowedChatCommands(config)) {
      built.logger.warn(sentence);
      process.stderr.write(`${sentence}\n`);
    }
    const gate = (gateway = adapters.length ? createGateway(built, adapters, await sharedDecisions(built)) : undefined);
    const chatHere = config.channels.console.enabled && (process.stdin.isTTY || !gate);
    let stopped: Promise<void> | undefined;
    if (gate) {
      // bwrap's check (started with the app, beside the rest) is in before the first message
      // runs: that run's tool list names the sandbox's state, and would otherwise run bwrap a
      // second time while the event loop waits on it.
      await built.sandbox.prepare();
      await gate.start();
      built.scheduling.setOwnerCheck((platform, userId) => gate.access.isOwner(platform, userId));
      scheduler = built.scheduling.startRunner({ kick: drainer(gate.delivery, built.store.outbox), engine: (key) => built.engine(key), logger: built.logger, fault: schedulerFault(), runner: built.cluster, isTrusted: (platform, userId) => platform === 'console' || gate.access.isAllowedUser(platform, userId) });
      // issue 21: background tasks a restart cut off resume (or are reported) now, once.
      built.delegation.tasks.start({ kick: drainer(gate.delivery, built.store.outbox), isTrusted: (platform, userId) => platform === 'console' || gate.access.isAllowedUser(platform, userId) });
      built.warmUp();
      health = await startHealth(config, adapters, built.logger);
      const names = adapters.map((adapter) => `${adapter.platform}${adapter.botName ? ` as @${adapter.botName}` : ''}${adapter.url ? ` at ${adapter.url}` : ''}`).join(', ');
      const healthAt = health ? ` Health: http://${config.health?.host}:${health.address.port}/healthz.` : '';
      // Listening before the line is out: whoever reads it may send SIGTERM at once, and a
      // signal before the listener killed hob without closing the store or flushing the log.
      if (!chatHere) stopped = untilSignal();
      process.stderr.write(`hob is running on ${names}.${healthAt} Press Ctrl-C to stop.\n`);
    }
    if (chatHere) {
      // Reminders made in the terminal arrive in it (through the outbox, like any chat's).
      const delivery = gate?.delivery ?? new Delivery(built.store.outbox, systemClock, built.logger);
      delivery.register(consoleOutlet());
      if (!gate) {
        delivery.start(1000);
        scheduler = built.scheduling.startRunner({ kick: drainer(delivery, built.store.outbox), engine: (key) => built.engine(key), logger: built.logger, fault: schedulerFault() });
        built.delegation.tasks.start({ kick: drainer(delivery, built.store.outbox) });
        stopDelivery = () => delivery.stop();
      }
      // The terminal's chat loads only here: a `hob start` serving chat channels never runs it.
      const { runChat, terminalChat } = await import('./commands.js');
      await runChat({ ...terminalChat(built), tasks: built.delegation.tasks });
    } else if (stopped) {
      await stopped;
    }
  } finally {
    // A balancer stops sending here first.
    await health?.close();
    await scheduler?.stop();
    await stopDelivery?.();
    // The gateway stops its channels; without one (the app failed), they are stopped here.
    if (gateway) await gateway.stop();
    else await Promise.all(adapters.map((adapter) => adapter.stop().catch(() => undefined)));
    await release();
    if (app) await app.close();
    else await flushLog(logger);
  }
}

/**
 * issue 23: on PostgreSQL a press may reach this process for a run waiting in another; its
 * notices' code (with the PostgreSQL store's) loads only then.
 */
async function sharedDecisions(app: App): Promise<SharedDecisions | undefined> {
  if (app.store.kind !== 'postgres') return undefined;
  const { sharedDecisionsOf } = await import('../store/postgres/shared-decisions.js');
  return sharedDecisionsOf(app.store, () => postgresUrl({ dataDir: app.config.data_dir, store: app.config.store }), (error) =>
    app.logger.warn({ err: errorMessage(error) }, 'approvals and questions from other processes: the notices connection failed; it reconnects'),
  );
}

/** The gateway over the channels; `shared` carries decisions between processes on one PostgreSQL store. */
export function createGateway(app: App, adapters: ChannelAdapter[], shared?: SharedDecisions): Gateway {
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
    sharedDecisions: shared,
  });
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
