import type { HobConfig } from '../config/schema.js';
import { channelChatCommands, channelSecretEnv, loadHobConfig } from './channels.js';
import { createHookJudge } from '../engine/hook-judge.js';
import { loadExtensions, type Extensions } from '../extensions.js';
import { COMMAND_NAMES } from '../gateway/commands.js';
import type { Logger } from '../logger.js';
import type { Memory } from '../memory/memory.js';
import { sessionSearchTool } from '../memory/session-search.js';
import { memoryTools } from '../memory/tools.js';
import { createHookRunner } from '../policy/hooks.js';
import { createReloadingHookRunner, mergeHooks, type ReloadingHookRunner } from '../policy/hook-reload.js';
import type { Sandbox } from '../policy/sandbox.js';
import type { ProviderClient } from '../providers/types.js';
import type { Scheduling } from '../scheduler/index.js';
import type { Store } from '../store/store.js';
import { builtinTools } from '../tools/builtins.js';
import { ToolRegistry, type AnyTool } from '../tools/tool.js';
import { toolSearchTool } from '../tools/tool-search.js';
import { webSearchTool } from '../tools/web-search.js';

export type AppToolsOptions = {
  config: HobConfig;
  configPath: string | undefined;
  store: Store;
  logger: Logger;
  sandbox: Sandbox;
  memory: Memory;
  scheduling: Scheduling;
  extraTools: AnyTool[];
  /** Tests shorten MCP restart backoff. */
  mcpConnection?: { backoffMs?: number; maxBackoffMs?: number; startTimeoutMs?: number };
  /** The model a prompt hook asks: the current one, after any `/model` switch. */
  provider(): ProviderClient;
};

/** What the model may call, and what runs around each call: tools, extensions (MCP, skills, plugins) and hooks. */
export type AppTools = {
  tools: ToolRegistry;
  extensions: Extensions;
  hooks: ReloadingHookRunner;
};

/** Builds the registry and loads the extensions into it; MCP servers connect in the background. */
export function createAppTools(options: AppToolsOptions): AppTools {
  const { config, memory, logger } = options;
  // Every registered channel's, configured or not: a token in the environment is a token.
  const secretEnv = channelSecretEnv();
  const tools: ToolRegistry = new ToolRegistry([
    ...builtinTools({
      bashTimeoutSeconds: config.tools.bash_timeout_seconds,
      sandbox: options.sandbox,
      webFetch: { maxBytes: config.tools.web_fetch.max_bytes, timeoutMs: config.tools.web_fetch.timeout_seconds * 1000 },
      secretEnv,
    }),
    ...memoryTools(memory),
    ...options.scheduling.tools,
    webSearchTool(config.tools.web_search) as unknown as AnyTool,
    sessionSearchTool(options.store.archive, memory.people),
    // issue 17: in a small window rarely used tools (and MCP tools beyond a few) load through it
    toolSearchTool(() => tools),
    ...options.extraTools,
  ]);
  const reservedCommands = new Set([...COMMAND_NAMES, ...channelChatCommands(config).map((command) => command.command)]);
  const extensions = loadExtensions(config, { registry: tools, logger, reservedCommands, mcpConnection: options.mcpConnection });
  for (const tool of extensions.tools) tools.register(tool);
  // Servers connect in the background: start-up never waits for them.
  void extensions.mcp.start();
  const judge = createHookJudge({ provider: options.provider, tools: () => tools.list(), workspace: config.tools.workspace });
  const hooks = createReloadingHookRunner({
    initial: mergeHooks(config.hooks, extensions.plugins.hooks),
    configPath: options.configPath,
    load: () => mergeHooks(loadHobConfig({ path: options.configPath }).config.hooks, extensions.plugins.hooks),
    create: (hookConfig) => createHookRunner(hookConfig, { cwd: config.tools.workspace, logger, judge, secretEnv }),
    logger,
  });
  return { tools, extensions, hooks };
}
