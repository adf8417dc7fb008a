import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { HobConfig } from './config/schema.js';
import { defaultConfigPath, requireModelKey } from './config/load.js';
import { systemClock, type Clock } from './core/clock.js';
import type { EngineDeps } from './engine/query-engine.js';
import { QueryEngine } from './engine/query-engine.js';
import type { PermissionGate } from './engine/ports.js';
import { buildSystemPrompt, formatSentAt } from './engine/system-prompt.js';
import { createLogger, type Logger } from './logger.js';
import { createHookRunner } from './policy/hooks.js';
import { createPermissionAdmin, type PermissionAdmin } from './policy/permission-admin.js';
import { createPermissionChecker, type PermissionChecker } from './policy/permissions.js';
import { createProvider, type ProviderSettings } from './providers/index.js';
import { costUsd } from './providers/pricing.js';
import type { ProviderClient } from './providers/types.js';
import { ConversationRepository } from './store/conversations.js';
import { openDatabase, type Db } from './store/db.js';
import { PermissionRuleRepository } from './store/permission-rules.js';
import { builtinTools } from './tools/builtins.js';
import { ToolRegistry, type AnyTool } from './tools/tool.js';
import { unlinkedPeople } from './core/person.js';
import { sessionSearchTool } from './memory/session-search.js';
import { SessionArchive } from './store/session-archive.js';

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
  /**
   * Load the model SDK only when `warmUp()` is called: `hob start` first brings the chat
   * channels up (their first poll), then loads it. Otherwise it loads during start-up.
   */
  deferModelLoad?: boolean;
};

/** Everything one hob process shares: the store, the model, tools, policy and logs. */
export type App = {
  config: HobConfig;
  db: Db;
  logger: Logger;
  conversations: ConversationRepository;
  permissions: PermissionChecker;
  /** `/permissions` in chats and the terminal. */
  permissionAdmin: PermissionAdmin;
  deps: EngineDeps;
  engine(sessionKey: string): QueryEngine;
  /** Switches the model for every conversation (the `/model` command). */
  switchModel(name: string): string;
  /** Loads the model SDK in the background, if it is not loaded yet. */
  warmUp(): void;
  /** Closes the database and waits until every log line is written. */
  close(): Promise<void>;
};

export async function createApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const client = options.provider ? undefined : createProvider(providerSettings(config, options.configPath));
  const provider: ProviderClient = options.provider ?? (client as ProviderClient);
  // A load failure surfaces on the first request, in words.
  const warmUp = () => void client?.preload().catch(() => undefined);
  if (!options.deferModelLoad) warmUp();
  mkdirSync(config.data_dir, { recursive: true });
  mkdirSync(config.tools.workspace, { recursive: true });
  const logger = createLogger({ dataDir: config.data_dir, level: config.log_level, destination: options.logDestination ?? 'file' });
  const dbPath = join(config.data_dir, 'hob.db');
  const db = openDatabase(dbPath);
  const conversations = new ConversationRepository(db, clock);
  const rules = new PermissionRuleRepository(db, clock);

  const permissions = createPermissionChecker(config.permissions, {
    workspace: config.tools.workspace,
    home: homedir(),
    // Every place a hob config (with its keys and tokens) may live, not only the one in use.
    protectedPaths: [
      dbPath,
      `${dbPath}-wal`,
      `${dbPath}-shm`,
      join(config.data_dir, 'logs'),
      ...new Set([...(options.configPath ? [options.configPath] : []), defaultConfigPath(), join(config.data_dir, 'config.yaml')]),
    ],
    alwaysRules: rules.all().map(({ userId, rule }) => ({ ...rule, userId })),
  });
  const gate: PermissionGate = {
    evaluate: (query) => permissions.evaluate(query),
    rememberAlways: (userId, rule) => rules.add(userId, permissions.addAlwaysRule(userId, rule)),
    isSensitivePath: (path, resolved) => permissions.isSensitivePath(path, resolved),
  };
  const tools = new ToolRegistry([
    ...builtinTools({
      bashTimeoutSeconds: config.tools.bash_timeout_seconds,
      webFetch: { maxBytes: config.tools.web_fetch.max_bytes, timeoutMs: config.tools.web_fetch.timeout_seconds * 1000 },
    }),
    sessionSearchTool(new SessionArchive(db), unlinkedPeople),
    ...(options.extraTools ?? []),
  ]);
  const hooks = createHookRunner(config.hooks, { cwd: config.tools.workspace, logger });

  const deps: EngineDeps = {
    provider,
    tools,
    permissions: gate,
    hooks,
    conversations,
    sentAt: () => formatSentAt(new Date(clock.now()), config.timezone),
    systemPrompt: ({ sessionKey, interactive }) =>
      buildSystemPrompt({
        now: new Date(clock.now()),
        timezone: config.timezone,
        workspace: config.tools.workspace,
        toolNames: tools.names(),
        channel: channelName(sessionKey) ?? options.channel,
        interactive,
      }),
    costUsd,
    workspace: config.tools.workspace,
    maxTurns: config.model.max_turns,
    maxTokens: config.model.max_tokens,
    approvalTimeoutSeconds: config.permissions.approval_timeout_seconds,
    contextWindow: config.model.context_window,
    people: unlinkedPeople,
  };

  return {
    config,
    db,
    logger,
    conversations,
    permissions,
    permissionAdmin: createPermissionAdmin(permissions, rules, config.permissions.mode),
    deps,
    engine: (sessionKey) => new QueryEngine(sessionKey, deps),
    switchModel: (name) => {
      if (options.provider) return 'This hob runs a fixed model.';
      const next = createProvider({ ...providerSettings(config, options.configPath), name });
      void next.preload().catch(() => undefined);
      deps.provider = next;
      logger.info({ model: name }, 'model switched');
      return `Switched to ${name}. New messages use it.`;
    },
    warmUp,
    close: async () => {
      db.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    },
  };
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

const PLATFORM_NAMES: Record<string, string> = { telegram: 'Telegram', slack: 'Slack', discord: 'Discord', console: 'a terminal' };

function channelName(sessionKey: string): string | undefined {
  return PLATFORM_NAMES[sessionKey.split(':', 1)[0] ?? ''];
}
