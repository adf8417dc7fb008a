import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HobConfig } from './config/schema.js';
import { defaultConfigPath, requireModelKey } from './config/load.js';
import { channelChatCommands, channelLabel, channelSecretEnv, loadHobConfig } from './cli/channels.js';
import { systemClock, type Clock } from './core/clock.js';
import { errorMessage } from './core/errors.js';
import { keepHeapSteady } from './core/steady-heap.js';
import type { EngineDeps } from './engine/query-engine.js';
import { QueryEngine } from './engine/query-engine.js';
import type { PermissionGate } from './engine/ports.js';
import { buildSystemPrompt, formatDay, formatSentAt } from './engine/system-prompt.js';
import { createDelegation, TASK_LEASE_MS, type Delegation } from './engine/delegation.js';
import { createLogger, flushLog, type Logger } from './logger.js';
import { Memory } from './memory/memory.js';
import { memoryTools } from './memory/tools.js';
import { createHookRunner } from './policy/hooks.js';
import { createHookJudge } from './engine/hook-judge.js';
import { loadExtensions, type Extensions } from './extensions.js';
import { COMMAND_NAMES } from './gateway/commands.js';
import { createReloadingHookRunner, mergeHooks, type ReloadingHookRunner } from './policy/hook-reload.js';
import { webSearchTool } from './tools/web-search.js';
import { createPermissionAdmin, type PermissionAdmin } from './policy/permission-admin.js';
import { createPermissionChecker, type PermissionChecker } from './policy/permissions.js';
import { createSandbox, type Sandbox } from './policy/sandbox.js';
import { createSensitivePaths } from './policy/sensitive-paths.js';
import { createProvider, type ProviderSettings } from './providers/index.js';
import { costUsd } from './providers/pricing.js';
import type { PersonResolver } from './core/person.js';
import type { ProviderClient } from './providers/types.js';
import { createScheduling, type Scheduling } from './scheduler/index.js';
import type { ConversationRepository } from './store/conversations.js';
import { openStore, sqlitePath } from './store/open.js';
import type { Store } from './store/store.js';
import { builtinTools } from './tools/builtins.js';
import { ToolRegistry, type AnyTool } from './tools/tool.js';
import { sessionSearchTool } from './memory/session-search.js';
import { isCalibrationState, TokenCalibrations } from './engine/compaction/calibration.js';
import { ModelWindow } from './engine/model-window.js';
import { promptBudget } from './engine/prompt-budget.js';
import { typedCalibrations } from './store/token-calibration.js';
import { TOOL_SEARCH, toolSearchTool } from './tools/tool-search.js';
import type { WindowInfo } from './providers/context-window.js';

export type AppOptions = {
  config: HobConfig;
  configPath?: string;
  /** Where the person talks from, for the system prompt ("a terminal", "Telegram"). */
  channel: string;
  logDestination?: 'file' | 'stderr' | 'silent';
  clock?: Clock;
  /** Tests hand in a scripted model. */
  provider?: ProviderClient;
  extraTools?: AnyTool[];
  /** Tests hand in a fake embeddings function (otherwise memory.embeddings decides). */
  embedder?: import('./memory/embeddings.js').Embedder;
  /** Tests shorten MCP restart backoff. */
  mcpConnection?: { backoffMs?: number; maxBackoffMs?: number; startTimeoutMs?: number };
  /**
   * Load the model SDK only when `warmUp()` is called: `hob start` first brings the chat
   * channels up (their first poll), then loads it. Otherwise it loads during start-up.
   */
  deferModelLoad?: boolean;
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
  engine(sessionKey: string): QueryEngine;
  /** Switches the model for every conversation (the `/model` command). */
  switchModel(name: string): string;
  /**
   * Loads the model SDK in the background, if it is not loaded yet, logs the bash sandbox's
   * state (once), and starts the sandbox's first walk for secrets on disk, so the first bash
   * call does not wait for it. From then on the heap's growth is bounded (core/steady-heap.ts:
   * `hob start` serves for weeks; its start-up, with most of its garbage, is behind it).
   */
  warmUp(): void;
  /** Closes the store and waits until every log line is written. */
  close(): Promise<void>;
};

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const client = options.provider ? undefined : createProvider(providerSettings(config, options.configPath));
  const provider: ProviderClient = options.provider ?? (client as ProviderClient);
  // A load failure surfaces on the first request, in words.
  const preloadModel = () => void client?.preload().catch(() => undefined);
  if (!options.deferModelLoad) preloadModel();
  mkdirSync(config.data_dir, { recursive: true });
  mkdirSync(config.tools.workspace, { recursive: true });
  const logger = createLogger({ dataDir: config.data_dir, level: config.log_level, destination: options.logDestination ?? 'file' });
  const dbPath = sqlitePath(config.data_dir);
  const store = openStore({ dataDir: config.data_dir, store: config.store }, { clock, onBackgroundError: (error) => logger.warn({ err: errorMessage(error) }, 'memory: writing the search uses failed; tried again with the next ones') });
  const conversations = store.conversations;
  const rules = store.permissionRules;
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

  // Every place a hob config (with its keys and tokens) may live, not only the one in use.
  const protectedPaths = [
    dbPath,
    `${dbPath}-wal`,
    `${dbPath}-shm`,
    join(config.data_dir, 'logs'),
    ...new Set([...(options.configPath ? [options.configPath] : []), defaultConfigPath(), join(config.data_dir, 'config.yaml')]),
  ];
  // One secret matcher: the permission checker and the sandbox share its walk of the disk.
  const sensitive = createSensitivePaths({ workspace: config.tools.workspace, home: homedir(), protectedPaths });
  const sandbox = createSandbox({ settings: config.permissions.sandbox, workspace: config.tools.workspace, home: homedir(), hiddenPaths: protectedPaths, dataDir: config.data_dir, sensitive });
  const permissions = createPermissionChecker(config.permissions, {
    workspace: config.tools.workspace,
    home: homedir(),
    protectedPaths,
    sensitive,
    alwaysRules: rules.all().map(({ userId, rule }) => ({ ...rule, userId })),
  });
  const gate: PermissionGate = {
    evaluate: (query) => permissions.evaluate(query),
    rememberAlways: (userId, rule) => rules.add(userId, permissions.addAlwaysRule(userId, rule)),
    isSensitivePath: (path, resolved) => permissions.isSensitivePath(path, resolved),
    mode: () => permissions.mode(),
  };
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
  // Every registered channel's, configured or not: a token in the environment is a token.
  const secretEnv = channelSecretEnv();
  const tools: ToolRegistry = new ToolRegistry([
    ...builtinTools({
      bashTimeoutSeconds: config.tools.bash_timeout_seconds,
      sandbox,
      webFetch: { maxBytes: config.tools.web_fetch.max_bytes, timeoutMs: config.tools.web_fetch.timeout_seconds * 1000 },
      secretEnv,
    }),
    ...memoryTools(memory),
    ...scheduling.tools,
    webSearchTool(config.tools.web_search) as unknown as AnyTool,
    sessionSearchTool(store.archive, memory.people),
    // issue 17: in a small window rarely used tools (and MCP tools beyond a few) load through it
    toolSearchTool(() => tools),
    ...(options.extraTools ?? []),
  ]);
  // Learning the sandbox's state runs bwrap once (tens of ms): `hob start` logs it after its channels are up.
  let sandboxLogged = false;
  const logSandbox = () => {
    if (!sandboxLogged) logger.info({ sandbox: sandbox.describe() }, 'bash sandbox');
    sandboxLogged = true;
  };
  if (!options.deferModelLoad) logSandbox();
  const extensions = loadExtensions(config, { registry: tools, logger, reservedCommands: new Set([...COMMAND_NAMES, ...channelChatCommands(config).map((command) => command.command)]), mcpConnection: options.mcpConnection });
  for (const tool of extensions.tools) tools.register(tool);
  // Servers connect in the background: start-up never waits for them.
  void extensions.mcp.start();
  const judge = createHookJudge({ provider: () => deps.provider, tools: () => tools.list(), workspace: config.tools.workspace });
  const hooks = createReloadingHookRunner({
    initial: mergeHooks(config.hooks, extensions.plugins.hooks),
    configPath: options.configPath,
    load: () => mergeHooks(loadHobConfig({ path: options.configPath }).config.hooks, extensions.plugins.hooks),
    create: (hookConfig) => createHookRunner(hookConfig, { cwd: config.tools.workspace, logger, judge, secretEnv }),
    logger,
  });

  const windows = new ModelWindow({ configured: config.model.context_window, discover: (model) => discoverWindowOf(config, model, options.configPath) });
  const calibrations = new TokenCalibrations(typedCalibrations(store.tokenCalibration, isCalibrationState));
  const deps: EngineDeps = {
    provider,
    tools,
    permissions: gate,
    hooks,
    conversations,
    sentAt: ({ sessionKey, userId }) => formatSentAt(new Date(clock.now()), memory.timezoneFor(memory.personFor(sessionKey, userId))),
    observe: ({ sessionKey, userId }, said) => memory.observe(sessionKey, userId, said),
    systemPrompt: ({ sessionKey, userId, interactive, sessionId, chatType, contextWindow }) => {
      // issue 17: what is always sent scales with the window.
      const budget = promptBudget(contextWindow, config.memory.snapshot_chars);
      return buildSystemPrompt({
        now: new Date(clock.now()),
        timezone: memory.timezoneFor(memory.personFor(sessionKey, userId)),
        workspace: config.tools.workspace,
        // tool_search names what it loads itself, and is sent only when something waits for it.
        toolNames: tools.names().filter((name) => name !== TOOL_SEARCH),
        channel: channelName(sessionKey) ?? options.channel,
        interactive,
        lean: budget.lean,
        // Skills first (the same for everyone), then this person's memory and profile. A group
        // conversation not keyed to this person (`:u<id>`) is shared: a shared thread, or group_sessions: shared.
        extra: [
          budget.skills === 'names' ? extensions.skillsPromptBrief : extensions.skillsPrompt,
          budget.skills === 'names' ? delegation.promptBrief : delegation.prompt,
          memory.promptSection({ sessionKey, sessionId, userId, shared: chatType !== undefined && chatType !== 'dm' && !sessionKey.endsWith(`:u${userId}`), budget }),
        ]
          .filter((part) => part)
          .join('\n\n'),
      });
    },
    costUsd,
    workspace: config.tools.workspace,
    maxTurns: config.model.max_turns,
    maxTokens: config.model.max_tokens,
    approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
    contextWindow: config.model.context_window,
    windows,
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

  return {
    config,
    store,
    logger,
    conversations,
    permissions,
    sandbox,
    permissionAdmin: createPermissionAdmin(permissions, rules, config.permissions.mode),
    memory,
    scheduling,
    deps,
    extensions,
    hooks,
    delegation,
    engine: (sessionKey) => new QueryEngine(sessionKey, deps),
    switchModel: (name) => {
      if (options.provider) return 'This hob runs a fixed model.';
      const next = createProvider({ ...providerSettings(config, options.configPath), name });
      void next.preload().catch(() => undefined);
      deps.provider = next;
      logger.info({ model: name }, 'model switched');
      return `Switched to ${name}. New messages use it.`;
    },
    warmUp: () => {
      keepHeapSteady();
      preloadModel();
      void windows.resolve(deps.provider.model);
      logSandbox();
      // In slices between other work: `hob start` calls this once its channels are up.
      if (sandbox.status().state === 'active') void sensitive.onDisk.current().catch(() => undefined);
    },
    close: async () => {
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

/** Asks the model's server for its window (hosted APIs have no such endpoint: their models are known). */
async function discoverWindowOf(config: HobConfig, model: string, configPath: string | undefined): Promise<WindowInfo | undefined> {
  const official = /(^|\.)(api\.openai\.com|api\.anthropic\.com)$/.test(new URL(config.model.base_url).hostname);
  if (official) return undefined;
  const { discoverWindow } = await import('./providers/window-discovery.js');
  return discoverWindow({ baseUrl: config.model.base_url, model, apiKey: requireModelKey(config, configPath) });
}

function providerSettings(config: HobConfig, configPath: string | undefined): ProviderSettings {
  return {
    provider: config.model.provider,
    name: config.model.name,
    apiKey: requireModelKey(config, configPath),
    baseUrl: config.model.base_url,
    promptCaching: config.model.prompt_caching,
    fallback: config.model.fallback,
    retry: {
      maxAttempts: config.model.retry.max_attempts,
      baseDelayMs: config.model.retry.base_delay_ms,
      maxDelayMs: config.model.retry.max_delay_ms,
    },
  };
}

/** Sessions no chat channel owns; a channel's own platform is named by its label (cli/channels.ts). */
const SESSION_PLACES: Record<string, string> = {
  console: 'a terminal',
  // issue 11: a report's own session; its answer is sent to the person's chat when it ends
  job: 'a scheduled report they set up (nobody reads along; your final answer is sent to them)',
};

function channelName(sessionKey: string): string | undefined {
  const platform = sessionKey.split(':', 1)[0] ?? '';
  return SESSION_PLACES[platform] ?? channelLabel(platform);
}
