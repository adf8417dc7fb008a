import { mkdirSync } from 'node:fs';
import { requireModelKey } from '../config/load.js';
import type { HobConfig } from '../config/schema.js';
import { UserFacingError } from '../core/errors.js';
import { holdWasmTierUp } from '../core/steady-heap.js';
import { DeferredAdapter } from '../gateway/deferred-adapter.js';
import type { Logger } from '../logger.js';
import { configuredChannels, loadHobConfig, type ConfiguredChannel } from '../app/channels.js';
import { claimSingleConsumers } from './single-consumers.js';
import { StartLog } from './start-log.js';

/** `hob start` as the command line runs it: serves until a signal, then exits. */
export async function startCommand(configPath: string | undefined): Promise<void> {
  await runStart(configPath);
  // Runs are stopped and the log flushed; idle sockets and timers need not hold the exit.
  process.exit();
}

/**
 * `hob start`: every configured chat channel through the gateway, plus the terminal when
 * no chat channel is configured (or `channels.console.enabled` says so).
 *
 * The order is the start-up's speed: what can fail without the network is checked first (the
 * config, the model key, the channels another process holds), then each channel loads its SDK
 * and connects, and only then is the rest of hob (the log, store, engine, memory, tools,
 * extensions, scheduler: start-serve.ts; what is logged before waits in StartLog) loaded, with
 * the model's SDK, and built, while the channels' handshakes wait on the network. What people
 * write meanwhile is held and answered once the gateway is ready (HeldInbound); a failure
 * after the channels connected closes them again before the error is shown, so nothing is left
 * half-running.
 */
export async function runStart(configPath: string | undefined): Promise<void> {
  // Before any channel's SDK loads its HTTP parser (core/steady-heap.ts).
  holdWasmTierUp();
  const { config, path } = loadHobConfig({ path: configPath });
  requireModelKey(config, path);
  const configured = configuredChannels(config);
  // Before anything starts: a channel another process already receives is left out here.
  const claim = await claimSingleConsumers(configured, { dataDir: config.data_dir, store: config.store }, (sentence) => process.stderr.write(`${sentence}\n`));
  if (configured.length > 0 && claim.kept.length === 0) throw new UserFacingError(claim.refused.join('\n'));
  for (const sentence of claim.refused) process.stderr.write(`${sentence}\n`);
  mkdirSync(config.data_dir, { recursive: true });
  // The log (pino) loads with the rest of hob, once the channels are under way; what is
  // logged before waits (StartLog).
  const log = new StartLog();
  let opened: Promise<Logger> | undefined;
  const openLog = () => (opened ??= import('../logger.js').then(({ createLogger }) => log.attach(createLogger({ dataDir: config.data_dir, level: config.log_level, destination: 'file' }))));
  keepRunningThroughStrayErrors(log);
  const adapters = connectChannels(claim.kept, config, log);
  // bwrap's check, which the app serving chat channels runs as a child process, forked once the
  // first channel's SDK is in: a fork copies the page tables of the whole heap, ~10 ms of the
  // main thread once every SDK is in (and in the app's build it fell on the way to the first
  // answer), less with one; forked before any, bwrap's namespaces were set up while node's own
  // loader (without the code cache) read the SDKs, and a Telegram-only start polled ~30 ms later.
  // Without a chat channel the app checks at once, itself.
  if (adapters.length) void Promise.race(adapters.map((adapter) => adapter.sdkLoaded)).then(() => import('../policy/sandbox.js')).then(({ probeSandboxEarly }) => probeSandboxEarly({ settings: config.permissions.sandbox }));
  let serving = false;
  try {
    await channelsUnderWay(adapters);
    // The model provider's code (Anthropic's call, or the OpenAI SDK's ~230 KB) loads beside the
    // rest of hob and is in before the app is built: a message held during start-up needs it for
    // its answer, and a module's load goes step by step, each step waiting for a turn of the event
    // loop; left to load behind the app's build, the gateway's start and the held messages' work,
    // it came in after the first run had asked for it.
    const [{ serve }, , logger] = await Promise.all([import('./start-serve.js'), import('../providers/index.js').then(({ preloadSdk }) => preloadSdk(config.model.provider)), openLog()]);
    serving = true;
    await serve({ config, configPath: path, logger, adapters, release: () => claim.release() });
  } finally {
    // serve() closes everything it was handed; this is for a failure before it was reached.
    if (!serving) {
      await Promise.all(adapters.map((adapter) => adapter.stop().catch(() => undefined)));
      await claim.release();
      const { flushLog } = await import('../logger.js');
      await openLog().then(flushLog, () => undefined);
    }
  }
}

/**
 * How long the rest of hob waits for the channels' handshakes once their SDKs are in. Over
 * loopback or a fast network they finish within it, and building the app does not delay
 * their round trips; over a slow one the app is built while they wait on it.
 */
const HANDSHAKE_HEAD_START_MS = 200;

/**
 * Resolves once every channel's SDK is in and each is up, or HANDSHAKE_HEAD_START_MS after the
 * SDKs (never rejects).
 */
async function channelsUnderWay(adapters: DeferredAdapter[]): Promise<void> {
  await Promise.all(adapters.map((adapter) => adapter.sdkLoaded));
  let timer: NodeJS.Timeout | undefined;
  const headStart = new Promise<void>((resolve) => (timer = setTimeout(resolve, HANDSHAKE_HEAD_START_MS)));
  await Promise.race([Promise.all(adapters.map((adapter) => adapter.connected)), headStart]);
  clearTimeout(timer);
}

/**
 * One adapter per configured channel, each loading its SDK (only when that channel is
 * configured, so hob without a channel never pays for its SDK) and connecting as soon as its
 * own SDK is in, its inbound held until the gateway takes it.
 */
function connectChannels(channels: ConfiguredChannel[], config: HobConfig, log: StartLog): DeferredAdapter[] {
  return channels.map(({ module, section }) => {
    const adapter = new DeferredAdapter(module.name, module.capabilities, () =>
      module.create(section, {
        logger: log.forChannel(module.name),
        dataDir: config.data_dir,
        notice: (sentence) => process.stderr.write(`${sentence}\n`),
      }),
    );
    void adapter.connect();
    return adapter;
  });
}

/**
 * The last net: an error nothing caught (a rejected promise no one awaited, a throw in a
 * timer) is logged with its stack and hob keeps serving every other chat.
 */
function keepRunningThroughStrayErrors(logger: Pick<StartLog, 'error'>): void {
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection (hob keeps running)'));
  process.on('uncaughtException', (error) => logger.error({ err: error }, 'uncaught exception (hob keeps running)'));
}
