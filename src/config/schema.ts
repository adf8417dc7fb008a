/**
 * The shape of config.yaml. Every object is strict so a typo is an error, every key but a
 * channel's credentials has a default, and the parsed value has all defaults filled in.
 * Messages are phrased as "expected …"; errors.ts appends what was received.
 *
 * Each section's schema is `z.lazy`: built the first time a config holding that section is
 * checked, or its defaults are read (load.ts fills the defaults of an unwritten section when it
 * is first read). Building every section took ~20 ms of each start, before any channel could
 * connect, for sections most configs never write.
 */
import { agentsSchema, tasksSchema } from './agents-schema.js';
import { z } from 'zod';
import { canonicalTimezone } from '../core/timezone.js';
import { channelsSchemaFor, type ChannelSection } from './channels-schema.js';
import { mcpSchema, pluginsSchema, webSearchSchema } from './extensions-schema.js';
import { httpUrl, nonEmptyString, nonNegativeInt, port, positiveInt, stringList } from './schema-parts.js';
import { voiceSchema } from './voice-schema.js';

export const MODEL_PROVIDERS = ['anthropic', 'openai'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

const DEFAULT_MODEL: Record<ModelProvider, { name: string; baseUrl: string }> = {
  anthropic: { name: 'claude-sonnet-4-6', baseUrl: 'https://api.anthropic.com' },
  openai: { name: 'gpt-4.1-mini', baseUrl: 'https://api.openai.com/v1' },
};

/** Where the model key comes from when model.api_key is not set. */
export const MODEL_KEY_ENV: Record<ModelProvider, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
};

export { HOOK_EVENTS, type HookEvent } from '../policy/hook-events.js';


const TIME_ZONE = 'expected an IANA time zone name like "Europe/Berlin" or "America/New_York"';
const timeZone = z
  .string({ error: TIME_ZONE })
  .refine((name) => canonicalTimezone(name) !== undefined, { error: TIME_ZONE })
  // "utc" and "europe/berlin" are accepted by Intl; the name is kept as written, its case set right.
  .transform((name) => canonicalTimezone(name) as string);

const retrySchema = z.lazy(() =>
  z
    .strictObject({
      max_attempts: positiveInt.default(4),
      base_delay_ms: nonNegativeInt.default(500),
      max_delay_ms: nonNegativeInt.default(30_000),
    })
    .prefault({}),
);

const modelSchema = z.lazy(() =>
  z
    .strictObject({
      provider: z.enum(MODEL_PROVIDERS).default('anthropic'),
      name: nonEmptyString.optional(),
      api_key: z.string({ error: 'expected a string' }).optional(),
      base_url: httpUrl.optional(),
      max_tokens: positiveInt.default(8192),
      /** Tokens the model reads at most; default: known for common models, else 128,000 (issue 13). */
      context_window: positiveInt.optional(),
      max_turns: positiveInt.default(50),
      prompt_caching: z.boolean().default(true),
      fallback: stringList,
      retry: retrySchema,
    })
    .transform((model) => ({
      ...model,
      name: model.name ?? DEFAULT_MODEL[model.provider].name,
      // Empty means "not set"; load.ts then falls back to the provider's environment variable.
      api_key: model.api_key === '' ? undefined : model.api_key,
      base_url: model.base_url ?? DEFAULT_MODEL[model.provider].baseUrl,
    }))
    .prefault({}),
);

/**
 * issue 7: `sandbox: auto` (the short form DESIGN.md writes) or
 * `sandbox: { mode: auto, network: true }`; both parse to `{ mode, network }`.
 */
const SANDBOX_MODES = ['auto', 'required', 'off'] as const;

const permissionsSchema = z.lazy(() =>
  z
    .strictObject({
      mode: z.enum(['default', 'plan', 'full_auto']).default('default'),
      approval_timeout_seconds: positiveInt.default(300),
      allowed_tools: stringList,
      denied_tools: stringList,
      path_rules: z.array(z.strictObject({ pattern: nonEmptyString, allow: z.boolean() })).default(() => []),
      denied_commands: stringList,
      sandbox: z
        .union([
          z.enum(SANDBOX_MODES, { error: 'expected auto, required or off (or { mode, network })' }).transform((mode) => ({ mode, network: true })),
          z.strictObject({ mode: z.enum(SANDBOX_MODES).default('auto'), network: z.boolean().default(true) }),
        ])
        .default({ mode: 'auto', network: true }),
    })
    .prefault({}),
);

const hookSchema = z.lazy(() => {
  const hookCommon = {
    timeout_seconds: positiveInt.default(30),
    /** Tool name glob for tool hooks; "*" matches everything. */
    matcher: nonEmptyString.default('*'),
    block_on_failure: z.boolean().default(false),
  };
  return z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('command'), command: nonEmptyString, ...hookCommon }),
    z.strictObject({
      type: z.literal('http'),
      url: httpUrl,
      headers: z.record(z.string(), z.string({ error: 'expected a string' })).default(() => ({})),
      ...hookCommon,
    }),
    /* issue 12: the model judges the payload (prompt: one answer; agent: may read files first) */
    z.strictObject({ type: z.literal('prompt'), prompt: nonEmptyString, model: nonEmptyString.optional(), ...hookCommon }),
    z.strictObject({ type: z.literal('agent'), prompt: nonEmptyString, model: nonEmptyString.optional(), max_turns: positiveInt.default(5), ...hookCommon }),
  ]);
});

/** The hooks section; plugins' manifests take the same shape (plugins/plugins.ts). */
export const hooksSchema = z.lazy(() => {
  const hookList = z.array(hookSchema).default(() => []);
  return z
    .strictObject({
      session_start: hookList,
      session_end: hookList,
      pre_compact: hookList,
      post_compact: hookList,
      pre_tool_use: hookList,
      post_tool_use: hookList,
    })
    .prefault({});
});

const toolsSchema = z.lazy(() =>
  z
    .strictObject({
      /** Defaults to <data_dir>/workspace (filled in below, once data_dir is known). */
      workspace: nonEmptyString.optional(),
      bash_timeout_seconds: positiveInt.default(120),
      web_fetch: z
        .strictObject({
          max_bytes: positiveInt.default(2_000_000),
          timeout_seconds: positiveInt.default(20),
        })
        .prefault({}),
      web_search: webSearchSchema,
    })
    .prefault({}),
);

const gatewaySchema = z.lazy(() =>
  z
    .strictObject({
      busy_mode: z.enum(['steer', 'queue', 'interrupt']).default('steer'),
      group_sessions: z.enum(['per_user', 'shared']).default('per_user'),
      max_queue: positiveInt.default(20),
      max_conversations: positiveInt.default(500),
      idle_timeout_seconds: positiveInt.default(1800),
      pairing_code_ttl_seconds: positiveInt.default(3600),
      /** How long a run goes before the busy sign and the live answer show; a quicker answer arrives as one message. 0: at once. */
      busy_after_ms: nonNegativeInt.default(1000),
    })
    .prefault({}),
);

/**
 * issue 23: `GET /healthz` on this address, for a load balancer or a supervisor (README:
 * Running hob for a team). Absent: no health endpoint.
 */
const healthSchema = z.lazy(() =>
  z
    .strictObject({
      port,
      host: nonEmptyString.default('127.0.0.1'),
    })
    .optional(),
);

/** issue 8: long-term memory; semantic search only when an embeddings endpoint is set. */
const memorySchema = z.lazy(() =>
  z
    .strictObject({
      snapshot_chars: nonNegativeInt.default(2000),
      extract: z.enum(['rules', 'off']).default('rules'),
      embeddings: z
        .strictObject({
          base_url: httpUrl,
          model: nonEmptyString,
          api_key: z.string({ error: 'expected a string' }).optional(),
        })
        .optional(),
    })
    .prefault({}),
);

const schedulerSchema = z.lazy(() =>
  z
    .strictObject({
      /** A run missed by less than this fires once, late; older ones are skipped and the owner told. */
      grace_minutes: nonNegativeInt.default(10),
      /** After this many failed runs in a row a job pauses and its owner is told. */
      max_failures: positiveInt.default(3),
      /** The time limit of one report run. */
      report_timeout_seconds: positiveInt.default(300),
      /** Reminders and reports one person may have that can still run (pending or paused). */
      max_jobs_per_person: positiveInt.default(50),
    })
    .prefault({}),
);

/**
 * Where hob keeps its data: the SQLite file in data_dir (one process), or PostgreSQL (any
 * number of `hob start` processes on one database). The URL carries the password: write it as
 * ${HOB_DATABASE_URL}, or leave it out and set HOB_DATABASE_URL; it is never logged.
 */
const storeSchema = z.lazy(() =>
  z
    .strictObject({
      kind: z.enum(['sqlite', 'postgres']).default('sqlite'),
      /** postgres://USER:PASSWORD@HOST:PORT/DATABASE (kind: postgres only). */
      url: z.string().regex(/^postgres(ql)?:\/\//, { error: 'expected a PostgreSQL URL like postgres://hob:PASSWORD@db.internal:5432/hob' }).optional(),
    })
    .prefault({}),
);

/**
 * Several `hob start` processes on one PostgreSQL store (issue 23). Unused with SQLite (one
 * process). A process that stops answering for `lease_ms` is taken for dead: another takes
 * over its conversations; each process renews its heartbeat every third of it.
 */
const clusterSchema = z.lazy(() =>
  z
    .strictObject({
      lease_ms: z.number().int().min(300).max(600_000).default(15_000),
    })
    .prefault({}),
);

/** The whole config, with a `channels.<name>` section for each of these channels. */
function buildConfigSchema(channels: readonly ChannelSection[]) {
  return z
    .strictObject({
      data_dir: nonEmptyString.default('~/.hob'),
      timezone: timeZone.default('UTC'),
      log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      store: storeSchema,
      cluster: clusterSchema,
      model: modelSchema,
      permissions: permissionsSchema,
      hooks: hooksSchema,
      tools: toolsSchema,
      gateway: gatewaySchema,
      health: healthSchema,
      scheduler: schedulerSchema,
      /** issue 21: workers (the agent tool) and background tasks. */
      agents: agentsSchema,
      tasks: tasksSchema,
      channels: channelsSchemaFor(channels),
      memory: memorySchema,
      mcp: mcpSchema,
      plugins: pluginsSchema,
      /** issue 22: voice notes transcribed, answers spoken; absent means not transcribed. */
      voice: voiceSchema,
    })
    .transform((config) => ({
      ...config,
      tools: { ...config.tools, workspace: config.tools.workspace ?? `${config.data_dir}/workspace` },
    }));
}

const schemas = new WeakMap<readonly ChannelSection[], ReturnType<typeof buildConfigSchema>>();

/**
 * The config schema for a list of chat channels (the registry: adapters/index.ts), built once
 * per list. Every part of hob that reads config.yaml is handed the list.
 */
export function hobConfigSchemaFor(channels: readonly ChannelSection[]): ReturnType<typeof buildConfigSchema> {
  let schema = schemas.get(channels);
  if (!schema) schemas.set(channels, (schema = buildConfigSchema(channels)));
  return schema;
}

/** The config schema (built when a config is read: a schema takes a few milliseconds to build, and every command reads one). */
type HobConfigSchema = ReturnType<typeof buildConfigSchema>;

/** The validated config with every default filled in. Paths are absolute once loadConfig returns. */
export type HobConfig = z.output<HobConfigSchema>;
/** What may be written in config.yaml (after ${VAR} interpolation). */
export type HobConfigInput = z.input<HobConfigSchema>;
export type ModelConfig = HobConfig['model'];
export type PermissionsConfig = HobConfig['permissions'];
export type HookConfig = z.output<typeof hookSchema>;
export type HooksConfig = HobConfig['hooks'];
export type ToolsConfig = HobConfig['tools'];
export type GatewayConfig = HobConfig['gateway'];
export type StoreConfig = HobConfig['store'];
export type SchedulerConfig = HobConfig['scheduler'];
export type { ChannelSection, ChannelsConfig } from './channels-schema.js';
export type MemoryConfig = HobConfig['memory'];
export type { VoiceConfig } from './voice-schema.js';
export type LogLevel = HobConfig['log_level'];
