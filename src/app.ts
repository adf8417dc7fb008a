import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HobConfig } from './config/schema.js';
import { systemClock, type Clock } from './core/clock.js';
import { errorMessage } from './core/errors.js';
import { keepHeapSteady } from './core/steady-heap.js';
import { whenIdle } from './core/when-idle.js';
import type { EngineDeps } from './engine/query-engine.js';
import { QueryEngine } from './engine/query-engine.js';
import { formatDay, formatSentAt } from './engine/system-prompt.js';
import { createDelegation, TASK_LEASE_MS, type Delegation } from './engine/delegation.js';
import { createLogger, flushLog, type Logger } from './logger.js';
import { Memory } from './memory/memory.js';
import type { Cluster } from './gateway/cluster/cluster.js';
import { openCluster } from './gateway/cluster/open.js';
import type { Extensions } from './extensions.js';
import type { ReloadingHookRunner } from './policy/hook-reload.js';
import type { PermissionAdmin } from './policy/permission-admin.js';
import type { PermissionChecker } from './policy/permissions.js';
import type { Sandbox } from './policy/sandbox.js';
import { costUsd } from './providers/pricing.js';
import type { PersonResolver } from './core/person.js';
import type { ProviderClient } from './providers/types.js';
import { createScheduling, type Scheduling } from './scheduler/index.js';
import type { ConversationRepository } from './store/conversations.js';
import { openStoreLazily } from './store/open-lazily.js';
import type { Store } from './store/store.js';
import type { AnyTool } from './tools/tool.js';
import { isCalibrationState, TokenCalibrations } from './engine/compaction/calibration.js';
import { typedCalibrations } from './store/token-calibration.js';
import { createAppModel } from './app/model.js';
import { createAppPolicy } from './app/policy.js';
import { appSystemPrompt } from './app/prompt.js';
import { createAppTools } from './app/tools.js';

export type AppOptions = {
  config: HobConfig;
  configPath?: string;
  /** Where the person talks from, for the system prompt ("a terminal", "Telegram"). */
  channel: string;
  logDestination?: 'file' | 'stderr' | 'silent';
  /** A logger made before the app (`hob start` makes it for its channels, which connect first); `logDestination` is then unused. */
  logger?: Logger;
  clock?: Clock;
  /** Tests hand in a scripted model. */
  provider?: ProviderClient;
  extraTools?: AnyTool[];
  /** Tests hand in a fake embeddings function (otherwise memory.embeddings decides). */
  embedder?: import('./memory/embeddings.js').Embedder;
  /** Tests shorten MCP restart backoff. */
  mcpConnection?: { backoffMs?: number; maxBackoffMs?: number; startTimeoutMs?: number };
  /**
   * `hob start` with chat channels: bwrap's check runs as a child process beside the rest of
   * start-up and `warmUp()` logs it and starts what may wait (the walk for secrets). Otherwise
   * the check runs at once (blocking, tens of ms). The model SDK loads at once either way:
   * `hob start` builds the app once its channels are up, and the first answer needs it.
   */
  serving?: boolean;
  /** Who a platform identity belongs to (the memory work hands in the linked resolver). */
  people?: PersonResolver;
  /** A person's own timezone (from their profile); config `timezone` otherwise. */
  timezoneFor?(personId: string): string | undefined;
};

/** Everything one hob process shares: the store, the model, tools, policy and logs. */
export type App = {
  config: HobConfig;
  store: Store;
  logger: Logger;
  conversations: ConversationRepository;
  permissions: PermissionChecker;
  /** issue 7: bubblewrap around bash (`hob doctor` shows its state). */
  sandbox: Sandbox;
  /** `/permissions` in chats and the terminal. */
  permissionAdmin: PermissionAdmin;
  /** People, long-term memory, profiles and persona (issue 8). */
  memory: Memory;
  /** Reminders and reports: jobs, their tools, the runner `hob start` runs. */
  scheduling: Scheduling;
  deps: EngineDeps;
  /** MCP servers, skills, plugins and their commands (issue 12). */
  extensions: Extensions;
  hooks: ReloadingHookRunner;
  /** issue 21: agent definitions, workers and background tasks. */
  delegation: Delegation;
  /** issue 23: this process among others on one PostgreSQL store (on SQLite: the only one). */
  cluster: Cluster;
  engine(sessionKey: string): QueryEngine;
  /** Switches the model for every conversation (the `/model` command). */
  switchModel(name: string): string;
  /**
   * Learns and logs the bash sandbox's state (once, bwrap run in the background), then, once
   * hob is idle, starts the sandbox's first walk for secrets on disk, so the first bash call
   * does not wait for it. From then on the heap's growth is bounded (core/steady-heap.ts:
   * `hob start` serves for weeks; its start-up, with most of its garbage, is behind it).
   */
  warmUp(): void;
  /** Closes the store and waits until every log line is written. */
  close(): Promise<void>;
};

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  // First: a missing model key stops start-up before anything is written.
  const model = createAppModel(config, options.configPath, options.provider);
  // `hob start` has loaded the SDK's chunk already (cli/start.ts); elsewhere it is read and
  // compiled while the rest is built, in the first await after this.
  model.preload();
  mkdirSync(config.data_dir, { recursive: true });
  mkdirSync(config.tools.workspace, { recursive: true });
  const logger = options.logger ?? createLogger({ dataDir: config.data_dir, level: config.log_level, destination: options.logDestination ?? 'file' });
  const store = await openStoreLazily({ dataDir: config.data_dir, store: config.store }, { clock, onBackgroundError: (error) => logger.warn({ err: errorMessage(error) }, 'store: a batched write failed (memory uses or session search rows); tried again with the next ones') });
  const conversations = store.conversations;
  const cluster = await openCluster({ store, settings: { dataDir: config.data_dir, store: config.store }, leaseMs: config.cluster.lease_ms, logger });
  const memory = new Memory({
    store,
    clock,
    logger,
    dataDir: config.data_dir,
    defaultTimezone: config.timezone,
    snapshotChars: config.memory.snapshot_chars,
    extract: config.memory.extract,
    embeddings: config.memory.embeddings && { baseUrl: config.memory.embeddings.base_url, model: config.memory.embeddings.model, apiKey: config.memory.embeddings.api_key },
    embedder: options.embedder,
  });
  const policy = createAppPolicy(config, options.configPath, store.permissionRules);
  const { sandbox } = policy;
  // bwrap's check starts now, as a child process beside the rest of start-up: the first
  // answer's tool list names the sandbox's state, and a check not finished by then runs bwrap
  // again while the event loop waits (warmUp logs it and starts the walk for secrets).
  if (options.serving) void sandbox.prepare();
  const scheduling = createScheduling({
    store,
    clock,
    defaultTimezone: config.timezone,
    settings: { graceMinutes: config.scheduler.grace_minutes, maxFailures: config.scheduler.max_failures, reportTimeoutSeconds: config.scheduler.report_timeout_seconds },
    // Jobs belong to the linked person and run in their profile's timezone.
    people: options.people ?? memory.people,
    timezoneFor: options.timezoneFor ?? ((personId) => memory.timezoneFor(personId)),
    maxJobsPerPerson: config.scheduler.max_jobs_per_person,
  });
  const { tools, extensions, hooks } = createAppTools({
    config,
    configPath: options.configPath,
    store,
    logger,
    sandbox,
    memory,
    scheduling,
    extraTools: options.extraTools ?? [],
    mcpConnection: options.mcpConnection,
    provider: () => deps.provider,
  });
  // Learning the sandbox's state runs bwrap once (tens of ms): `hob start` learns it in the background once its channels are up.
  let sandboxLogged = false;
  const logSandbox = () => {
    if (!sandboxLogged) logger.info({ sandbox: sandbox.describe() }, 'bash sandbox');
    sandboxLogged = true;
  };
  if (!options.serving) logSandbox();

  const calibrations = new TokenCalibrations(typedCalibrations(store.tokenCalibration, isCalibrationState));
  const deps: EngineDeps = {
    provider: model.provider,
    tools,
    permissions: policy.gate,
    hooks,
    // issue 23: a conversation taken over by another process is no longer written from this one.
    conversations: cluster.fence(conversations),
    sentAt: ({ sessionKey, userId }) => formatSentAt(new Date(clock.now()), memory.timezoneFor(memory.personFor(sessionKey, userId))),
    observe: ({ sessionKey, userId }, said) => memory.observe(sessionKey, userId, said),
    systemPrompt: appSystemPrompt({ config, clock, memory, tools, extensions, delegation: () => delegation, channel: options.channel }),
    costUsd,
    workspace: config.tools.workspace,
    maxTurns: config.model.max_turns,
    maxTokens: config.model.max_tokens,
    approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
    contextWindow: config.model.context_window,
    windows: model.windows,
    calibrations,
    people: memory.people,
    notes: (sessionKey) => delegation.tasks.notes(sessionKey),
  };
  const delegation = createDelegation({
    tasks: store.tasks,
    // On PostgreSQL other processes may share the tasks: claims expire with a lease, so a dead process's tasks are taken over.
    ...(store.kind === 'postgres' ? { taskLease: { ms: TASK_LEASE_MS } } : {}),
    outbox: store.outbox,
    deps,
    agents: { maxParallel: config.agents.max_parallel, maxTurns: config.agents.max_turns, timeoutSeconds: config.agents.timeout_seconds, model: config.agents.model, models: config.agents.models },
    taskSettings: { maxRunning: config.tasks.max_running, timeoutSeconds: config.tasks.timeout_seconds, maxTokens: config.tasks.max_tokens },
    sources: [...extensions.plugins.agentSources, { origin: 'yours', dir: join(config.data_dir, 'agents') }],
    people: memory.people,
    clock,
    logger,
    today: ({ sessionKey, userId }) => formatDay(new Date(clock.now()), memory.timezoneFor(memory.personFor(sessionKey, userId))),
  });
  for (const tool of delegation.tools) tools.register(tool);
  // warmUp's walk for secrets, waiting for an idle moment, is called off by close().
  let cancelWalk = (): void => undefined;
  let closed = false;

  return {
    config,
    store,
    logger,
    conversations,
    permissions: policy.permissions,
    sandbox,
    permissionAdmin: policy.permissionAdmin,
    memory,
    scheduling,
    deps,
    extensions,
    hooks,
    delegation,
    cluster,
    engine: (sessionKey) => new QueryEngine(sessionKey, deps),
    switchModel: (name) => {
      const next = model.switchTo(name);
      if (!next) return 'This hob runs a fixed model.';
      deps.provider = next;
      logger.info({ model: name }, 'model switched');
      return `Switched to ${name}. New messages use it.`;
    },
    warmUp: () => {
      keepHeapSteady();
      void model.windows.resolve(deps.provider.model);
      void sandbox.prepare().then((status) => {
        logSandbox();
        // Once hob is idle: started at once, its slices fell between the steps of the messages
        // held while hob started, and their answers waited on it; started a few seconds later
        // (tried on 2026-12-01), its CPU fell among the first messages people send instead. A
        // bash call before it has run walks then (the sandbox waits for the findings).
        if (status.state === 'active' && !closed) cancelWalk = whenIdle(() => void policy.sensitive.onDisk.current().catch(() => undefined));
      });
    },
    close: async () => {
      closed = true;
      cancelWalk();
      await delegation.tasks.shutdown();
      calibrations.flush();
      memory.close();
      hooks.close();
      await extensions.close();
      store.close();
      await flushLog(logger);
    },
  };
}
