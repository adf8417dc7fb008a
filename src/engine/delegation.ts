/**
 * Work hob hands off, put together once per process: agent definitions, the `agent` tool
 * (workers), background tasks and their tools. Tasks run as engines of their own session,
 * with every tool but the task tools (a task does not start tasks).
 */
import type { Clock } from '../core/clock.js';
import type { PersonResolver } from '../core/person.js';
import { newRunnerId } from '../core/runner-id.js';
import type { Logger } from '../logger.js';
import type { OutboxRepository } from '../store/outbox.js';
import type { TaskRepository } from '../store/tasks.js';
import type { AnyTool } from '../tools/tool.js';
import { agentTool, type AgentSettings } from './agents/agent-tool.js';
import { agentsPromptSection, bundledAgentsDir, loadAgentDefinitions, type AgentCatalog, type AgentSource } from './agents/definitions.js';
import { WorkerTools } from './agents/worker-tools.js';
import type { EngineDeps } from './engine-deps.js';
import { QueryEngine } from './query-engine.js';
import { TaskManager, type TaskSettings } from './tasks/task-manager.js';
import { taskTools } from './tasks/task-tools.js';

export type DelegationOptions = {
  /** Where tasks and workers are kept; their results are recorded in `outbox` in the same transaction (one database). */
  tasks: TaskRepository;
  outbox: OutboxRepository;
  /** The engines' shared deps (read when a worker or task starts: /model may switch the provider). */
  deps: EngineDeps;
  agents: AgentSettings;
  taskSettings: TaskSettings;
  /** Set when several processes share the database: how long a task's claim lasts unless renewed (TaskManagerDeps.lease). */
  taskLease?: { ms: number };
  /** Where definitions come from besides the bundled folder: plugins', then the person's own (data_dir/agents). */
  sources: AgentSource[];
  people: PersonResolver;
  clock: Clock;
  logger: Logger;
  /** Today's date in the person's timezone, for a worker's prompt. */
  today(context: { sessionKey: string; userId: string }): string;
};

export type Delegation = {
  catalog: AgentCatalog;
  tasks: TaskManager;
  repository: TaskRepository;
  /** The agent tool and the task tools, to register with the others. */
  tools: AnyTool[];
  /** The system prompt's agents and tasks part; none for a small window, where their tools are deferred. */
  prompt: string | undefined;
  promptBrief: string | undefined;
};

/** How long a task's claim lasts unless renewed when processes share a database (the cluster's default lease). */
export const TASK_LEASE_MS = 15_000;

const TASK_TOOLS: ReadonlySet<string> = new Set(['task_create', 'task_list', 'task_output', 'task_stop']);

/** How the model should read a task's notification: it arrives inside the person's message, but is hob's. */
const TASKS_NOTE =
  'Background tasks (task_create) run apart from this chat and post their result here. When one ends, the person\'s next message starts with a <task-notification> block: hob adds it, the person did not write it. Take its facts into account; do not thank them for it or treat it as their request.';

export function createDelegation(options: DelegationOptions): Delegation {
  const { deps, clock, people } = options;
  const bundled = bundledAgentsDir();
  const catalog = loadAgentDefinitions([...(bundled ? [{ origin: 'bundled', dir: bundled }] : []), ...options.sources]);
  for (const problem of catalog.problems) options.logger.warn({ problem }, 'agent definition skipped');
  const repository = options.tasks;
  const runnerId = newRunnerId();
  const taskToolset = () => {
    const names = deps.tools.names().filter((name) => !TASK_TOOLS.has(name));
    return new WorkerTools(deps.tools, names, TASK_TOOLS);
  };
  const tasks = new TaskManager({
    tasks: repository,
    outbox: options.outbox,
    // A task's engine: the same deps, without the task tools (it does not start or stop tasks).
    engine: (sessionKey) => new QueryEngine(sessionKey, { ...deps, tools: taskToolset(), notes: undefined }),
    people,
    clock,
    logger: options.logger,
    settings: options.taskSettings,
    runnerId,
    ...(options.taskLease ? { lease: options.taskLease } : {}),
  });
  const agent = agentTool({
    profile: () => deps,
    catalog,
    tasks: repository,
    people,
    clock,
    costUsd: (model, usage) => deps.costUsd(model, usage),
    settings: options.agents,
    runnerId,
    today: options.today,
  });
  return {
    catalog,
    tasks,
    repository,
    tools: [agent, ...taskTools(tasks, people, () => clock.now())],
    prompt: [agentsPromptSection(catalog.list()), TASKS_NOTE].filter(Boolean).join('\n\n'),
    // A small window sends none: the agent and task tools wait behind tool_search there (tool-menu.ts).
    promptBrief: undefined,
  };
}
