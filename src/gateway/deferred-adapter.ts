import type {
  BotCommand, ChannelAdapter, ChannelCapabilities, FoundDelivery, InboundSink, LiveAnswer, LiveAnswerOptions, OutboundMessage, SendOptions, SentRef, Target,
  UnconfirmedDelivery,
} from './channel.js';
import { HeldInbound } from './held-inbound.js';

/** How long `stop()` waits for a channel's handshake in progress before stopping it regardless. */
const STOP_WAITS_FOR_CONNECT_MS = 5000;

/** Resolves once `promise` settles or `ms` passed, whichever comes first (never rejects). */
function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise.then(() => undefined, () => undefined), elapsed]).finally(() => clearTimeout(timer));
}

/**
 * A channel whose adapter is still loading. A channel's SDK is most of its start-up (the
 * largest is ~4 MB of code to compile), so `hob start` makes one of these per configured channel
 * at once, and each channel starts as soon as its own SDK has loaded: one channel polls while
 * another's code still compiles, instead of after it. What is known without the SDK — the
 * platform and its capabilities — is given; every call waits for the adapter, and a live
 * answer (asked synchronously) is offered once it has loaded.
 *
 * `connect()` starts the channel before the gateway exists (`hob start` connects its channels
 * first and builds the rest of hob while their handshakes wait on the network): what arrives
 * meanwhile is held until the gateway's `start(sink)` takes it (HeldInbound).
 */
export class DeferredAdapter implements ChannelAdapter {
  private loaded: ChannelAdapter | undefined;
  private readonly loading: Promise<ChannelAdapter>;
  private early: { inbound: HeldInbound; started: Promise<void> } | undefined;

  constructor(
    readonly platform: string,
    readonly capabilities: ChannelCapabilities,
    load: () => Promise<ChannelAdapter>,
  ) {
    this.loading = load().then((adapter) => (this.loaded = adapter));
    // A failed load surfaces where the adapter is used (start first); not as an unhandled rejection.
    this.loading.catch(() => undefined);
  }

  /** Resolves once the SDK is loaded and the adapter made, or failed to be (never rejects). */
  get sdkLoaded(): Promise<void> {
    return this.loading.then(() => undefined, () => undefined);
  }

  /** Resolves once `connect()` brought the channel up, or it failed to (never rejects); at once without `connect()`. */
  get connected(): Promise<void> {
    return this.early ? this.early.started.catch(() => undefined) : Promise.resolve();
  }

  get botName(): string | undefined {
    return this.loaded?.botName;
  }

  get url(): string | undefined {
    return this.loaded?.url;
  }

  get down(): string | undefined {
    return this.loaded ? this.loaded.down : 'still loading';
  }

  /**
   * Starts the channel now, its inbound held; resolves once it is up (rejects as `start`
   * would). Called at most once, before `start`.
   */
  connect(): Promise<void> {
    if (this.early) throw new Error(`the ${this.platform} channel is already connecting`);
    const inbound = new HeldInbound();
    const started = this.loading.then((adapter) => adapter.start(inbound));
    // A failure surfaces at `start` (or to whoever awaits this); never as an unhandled rejection.
    started.catch(() => undefined);
    this.early = { inbound, started };
    return started;
  }

  /** Events that arrived since `connect()` and wait for `start`. */
  get held(): number {
    return this.early?.inbound.waiting ?? 0;
  }

  async start(sink: InboundSink): Promise<void> {
    if (!this.early) return (await this.loading).start(sink);
    await this.early.started;
    this.early.inbound.release(sink);
  }

  /**
   * Stops the channel; one still connecting is stopped once its handshake settled (at most
   * STOP_WAITS_FOR_CONNECT_MS): an SDK stopped midway can finish connecting after its stop and
   * leave a socket open that keeps the process from exiting.
   */
  async stop(): Promise<void> {
    const adapter = await this.loading.catch(() => undefined);
    if (this.early) await settledWithin(this.early.started, STOP_WAITS_FOR_CONNECT_MS);
    await adapter?.stop();
  }

  async send(target: Target, message: OutboundMessage, options?: SendOptions): Promise<SentRef> {
    return (await this.loading).send(target, message, options);
  }

  async edit(ref: SentRef, message: OutboundMessage): Promise<void> {
    await (await this.loading).edit(ref, message);
  }

  async typing(target: Target): Promise<void> {
    await (await this.loading).typing(target);
  }

  liveAnswer(target: Target, options: LiveAnswerOptions): LiveAnswer | undefined {
    return this.loaded?.liveAnswer?.(target, options);
  }

  /** A channel that cannot look answers as if nothing was found: delivery stays at least once there. */
  async findDelivered(target: Target, deliveries: UnconfirmedDelivery[], known: ReadonlySet<string>): Promise<Map<string, FoundDelivery>> {
    const adapter = await this.loading;
    return adapter.findDelivered ? adapter.findDelivered(target, deliveries, known) : new Map();
  }

  /** A channel that cannot settle a live message leaves it to the gateway, as without this method. */
  async settleLive(ref: SentRef, answer: OutboundMessage | undefined): Promise<boolean> {
    const adapter = await this.loading;
    return adapter.settleLive ? adapter.settleLive(ref, answer) : false;
  }

  async directTarget(userId: string): Promise<Target | undefined> {
    return (await this.loading).directTarget?.(userId);
  }

  async download(ref: string): Promise<Buffer> {
    const adapter = await this.loading;
    if (!adapter.download) throw new Error(`${this.platform} cannot fetch a file by its ref`);
    return adapter.download(ref);
  }

  async setCommands(everyone: BotCommand[], owners?: { userIds: string[]; commands: BotCommand[] }): Promise<void> {
    await (await this.loading).setCommands?.(everyone, owners);
  }
}
