/**
 * The `agent` tool: the model hands a self-contained piece of work to a worker and gets its
 * answer back as the tool result. Several calls in one turn run at once (the tool counts as
 * read-only for batching: what its worker does is checked call by call), up to a limit per
 * person; calls past it wait for a free slot. Every worker is stored as a row, so /usage
 * counts it and a restart closes one it cut off.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import type { Usage } from '../../core/messages.js';
import { platformOf, type PersonResolver } from '../../core/person.js';
import type { TaskRepository } from '../../store/tasks.js';
import { defineTool, type AnyTool, type ToolContext } from '../../tools/tool.js';
import type { RunProfile } from '../engine-deps.js';
import { withModel } from '../../providers/fallback.js';
import { looserThan, type AgentCatalog, type AgentDefinition } from './definitions.js';
import { PersonSlots } from './person-slots.js';
import { describeOutcome, runWorker, type WorkerOutcome } from './worker.js';
import { workerSystemPrompt } from './worker-prompt.js';
import { planWorkerTools, workerGate, WorkerTools } from './worker-tools.js';

/** config `agents:` */
export type AgentSettings = {
  /** Workers one person may have running at once; more calls wait. */
  maxParallel: number;
  maxTurns: number;
  timeoutSeconds: number;
  /** The model workers use unless a definition or the call names another (default: the caller's). */
  model?: string;
  /** Other models a call or definition may name. */
  models: string[];
};

export type AgentToolDeps = {
  /** What workers start from: the current model, the caller's tools and gates and limits. */
  profile(): RunProfile;
  catalog: AgentCatalog;
  tasks: TaskRepository;
  people: PersonResolver;
  clock: Clock;
  costUsd(model: string, usage: Usage): number;
  settings: AgentSettings;
  /** This process's runner id: a restart closes the workers a dead runner left open. */
  runnerId: string;
  /** The current date for the worker's prompt, in the person's timezone. */
  today(context: { sessionKey: string; userId: string }): string;
};

const input = z.strictObject({
  description: z.string().min(1).max(100).describe('A short label for the work (3-6 words), shown to the person'),
  prompt: z.string().min(1).describe('The whole task, self-contained: the worker sees nothing else of this conversation'),
  agent: z.string().optional().describe('An agent definition to run as (see Agents in the system prompt); default a general worker'),
  tools: z.array(z.string()).optional().describe('Tools the worker may use (a subset of yours); default: read-only use of your tools'),
  model: z.string().optional().describe('A cheaper or stronger model for this worker, if configured'),
});

export function agentTool(deps: AgentToolDeps): AnyTool {
  const slots = new PersonSlots(deps.settings.maxParallel);
  const tool = defineTool({
    name: 'agent',
    description:
      'Hands a self-contained piece of work to a worker with a fresh context and returns its answer. Call it several times in one turn to run workers in parallel (independent look-ups, checking several things at once). Write each prompt so it stands alone.',
    input,
    readOnly: true,
    run: async (call, ctx) => {
      if (ctx.worker) return { content: 'Refused: a worker cannot start workers. Do the work yourself, or finish and say what else is needed.', isError: true };
      const prepared = prepare(deps, call, ctx);
      if ('error' in prepared) return { content: prepared.error, isError: true };
      const personId = deps.people.personId(platformOf(ctx.sessionKey), ctx.userId);
      const release = await slots.acquire(personId, ctx.signal);
      if (!release) return { content: 'Not started: the run was stopped while the worker waited for a free slot.', isError: true };
      try {
        const outcome = await runStored(deps, prepared, call, ctx, personId);
        return { content: describeOutcome(prepared.name, outcome), isError: outcome.status === 'failed' || outcome.status === 'stopped' };
      } finally {
        release();
      }
    },
  });
  return tool as unknown as AnyTool;
}

type Prepared = { name: string; definition: AgentDefinition | undefined; profile: RunProfile; tools: WorkerTools; gate: RunProfile['permissions']; model: string | undefined; toolNames: string[]; readOnlyOnly: boolean };

/** Checks the call against the definition, the caller's mode and tools; an error says what to change. */
function prepare(deps: AgentToolDeps, call: z.output<typeof input>, ctx: ToolContext): Prepared | { error: string } {
  const profile = deps.profile();
  const definition = call.agent === undefined ? undefined : deps.catalog.get(call.agent);
  if (call.agent !== undefined && !definition) {
    const names = deps.catalog.list().map((agent) => agent.name);
    return { error: `There is no agent named "${call.agent}". ${names.length ? `Agents: ${names.join(', ')}.` : 'No agents are defined;'} Leave "agent" out for a general worker.` };
  }
  const callerMode = profile.permissions.mode?.() ?? 'default';
  const mode = definition?.permissionMode ?? callerMode;
  if (looserThan(mode, callerMode)) {
    return { error: `Refused: the ${definition?.name ?? ''} agent asks for permission_mode ${mode}, looser than this conversation's ${callerMode}. A worker may not do more than you may; the owner can lower permission_mode in ${definition?.path ?? 'its file'}.` };
  }
  const plan = planWorkerTools(profile.tools, definition, call.tools);
  if ('error' in plan) return plan;
  const model = call.model ?? definition?.model ?? deps.settings.model;
  const allowedModels = new Set([profile.provider.model, ...(deps.settings.model ? [deps.settings.model] : []), ...deps.settings.models, ...deps.catalog.list().flatMap((agent) => (agent.model ? [agent.model] : []))]);
  if (model !== undefined && !allowedModels.has(model)) return { error: `A worker cannot use the model "${model}": the models configured for workers are ${[...allowedModels].join(', ')}.` };
  const name = definition?.name ?? 'worker';
  return { name, definition, profile, tools: new WorkerTools(profile.tools, plan.names), gate: workerGate(profile.permissions, mode, plan.readOnlyOnly, name), model, toolNames: plan.names, readOnlyOnly: plan.readOnlyOnly };
}

/** Runs the worker with its row: running here from its first write (its lease is renewed with this process's tasks) → ended with what it spent. */
async function runStored(deps: AgentToolDeps, prepared: Prepared, call: z.output<typeof input>, ctx: ToolContext, personId: string): Promise<WorkerOutcome> {
  const id = `w${randomBytes(4).toString('hex')}`;
  const { tasks, clock, settings } = deps;
  tasks.insert({
    id,
    kind: 'worker',
    personId,
    userId: ctx.userId,
    originSession: ctx.sessionKey,
    platform: ctx.chat?.platform ?? platformOf(ctx.sessionKey),
    chatId: ctx.chat?.chatId ?? '',
    threadId: ctx.chat?.threadId,
    agent: prepared.definition?.name,
    description: call.description,
    prompt: call.prompt,
    createdAt: clock.now(),
  }, { runner: deps.runnerId, leaseUntil: undefined });
  const { profile } = prepared;
  const provider = prepared.model && prepared.model !== profile.provider.model ? withModel(profile.provider, prepared.model) : profile.provider;
  const { progress: _progress, relay, ...context } = ctx;
  const outcome = await runWorker({
    name: prepared.name,
    id,
    prompt: call.prompt,
    system: workerSystemPrompt({ name: prepared.name, today: deps.today(ctx), workspace: profile.workspace, toolNames: prepared.toolNames, readOnly: prepared.readOnlyOnly, instructions: prepared.definition?.body }),
    provider,
    tools: prepared.tools,
    permissions: prepared.gate,
    hooks: profile.hooks,
    maxTurns: prepared.definition?.maxTurns ?? settings.maxTurns,
    maxTokens: profile.maxTokens,
    timeoutMs: settings.timeoutSeconds * 1000,
    approvalTimeoutSeconds: profile.approvalTimeoutSeconds,
    context,
    costUsd: deps.costUsd,
    relay,
    onSpend: (spent) => tasks.recordSpend(id, spend(spent)),
  });
  const status = outcome.status === 'completed' ? 'completed' : outcome.status === 'stopped' ? 'stopped' : 'failed';
  tasks.finish(id, { status, result: outcome.text, error: outcome.error ?? (status === 'failed' ? outcome.status : undefined), ...spend(outcome) }, clock.now());
  return outcome;
}

function spend(spent: Pick<WorkerOutcome, 'toolUses' | 'usage' | 'costUsd'>) {
  return { toolUses: spent.toolUses, inputTokens: spent.usage.inputTokens + spent.usage.cacheReadTokens + spent.usage.cacheWriteTokens, outputTokens: spent.usage.outputTokens, costUsd: spent.costUsd };
}
