/**
 * Config for what extends hob: MCP servers, plugins and the web_search tool. Kept apart from
 * schema.ts so that file only names the sections; plugins reuse the MCP server shape.
 */
import { z } from 'zod';
import { baseUrlWithoutSlash, httpUrl, nonEmptyString, positiveInt, secret, stringList } from './schema-parts.js';

const SERVER_NAME = 'expected a server name of letters, digits, "-" and "_" (it becomes part of tool names: mcp__<server>__<tool>)';
const mcpServerName = z.string({ error: SERVER_NAME }).regex(/^[A-Za-z0-9_-]{1,32}$/, { error: SERVER_NAME });

const common = {
  /** Per-call time limit for this server's tools; the section's default when unset. */
  timeout_seconds: positiveInt.optional(),
  enabled: z.boolean().default(true),
};

/** One MCP server: a command spoken to over stdio, or a streamable HTTP URL. */
const mcpServerSchema = z.lazy(() =>
  z.union(
    [
      z.strictObject({
        command: nonEmptyString,
        args: z.array(z.string({ error: 'expected a string' })).default(() => []),
        env: z.record(z.string(), z.string({ error: 'expected a string' })).default(() => ({})),
        cwd: nonEmptyString.optional(),
        ...common,
      }),
      z.strictObject({
        url: httpUrl,
        headers: z.record(z.string(), z.string({ error: 'expected a string' })).default(() => ({})),
        ...common,
      }),
    ],
    { error: 'expected either { command, args, env } (stdio) or { url, headers } (streamable HTTP)' },
  ),
);

export const mcpServersSchema = z.lazy(() => z.record(mcpServerName, mcpServerSchema).default(() => ({})));

export const mcpSchema = z.lazy(() =>
  z
    .strictObject({
      servers: mcpServersSchema,
      call_timeout_seconds: positiveInt.default(60),
    })
    .prefault({}),
);

export const pluginsSchema = z.lazy(() =>
  z
    .strictObject({
      /** Plugins to turn on although their manifest says `enabled: false`. */
      enabled: stringList,
      /** Plugins to turn off; beats `enabled`. */
      disabled: stringList,
    })
    .prefault({}),
);

const WEB_SEARCH_PROVIDERS = ['duckduckgo', 'brave', 'tavily', 'searxng'] as const;
export type WebSearchProvider = (typeof WEB_SEARCH_PROVIDERS)[number];

export const webSearchSchema = z.lazy(() =>
  z
    .strictObject({
      provider: z.enum(WEB_SEARCH_PROVIDERS).default('duckduckgo'),
      api_key: secret().optional(),
      /** The provider's endpoint; required for searxng (your instance), optional for the rest. */
      base_url: baseUrlWithoutSlash.optional(),
      timeout_seconds: positiveInt.default(15),
      max_results: positiveInt.default(8),
    })
    .superRefine((value, ctx) => {
      if ((value.provider === 'brave' || value.provider === 'tavily') && !value.api_key) {
        ctx.addIssue({ code: 'custom', path: ['api_key'], message: `expected an API key: the ${value.provider} provider needs one` });
      }
      if (value.provider === 'searxng' && !value.base_url) {
        ctx.addIssue({ code: 'custom', path: ['base_url'], message: 'expected the URL of your SearXNG instance, like "http://localhost:8080"' });
      }
    })
    .prefault({}),
);

export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type McpConfig = z.output<typeof mcpSchema>;
export type PluginsConfig = z.output<typeof pluginsSchema>;
export type WebSearchConfig = z.output<typeof webSearchSchema>;
