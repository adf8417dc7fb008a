/**
 * MCP tools as hob tools: `mcp__<server>__<tool>`, the server's JSON Schema checked before
 * the call (a bad input never reaches the server), annotations feeding the permission
 * decision, and results flattened to text for the model. Plus the two resource tools.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { defineTool, type AnyTool, type ToolOutput } from '../tools/tool.js';
import type { McpServerConnection, McpToolInfo } from './connection.js';
import { isListingTool, namedPath, secretArgument, withoutSecretNames } from './secret-arguments.js';

/** API tool names allow letters, digits, "_" and "-", at most 64 characters. */
function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

const validator = new AjvJsonSchemaValidator();

/** A tool is read-only only when the server says so and does not also call it destructive. */
function isReadOnlyMcpTool(info: McpToolInfo): boolean {
  return info.annotations?.readOnlyHint === true && info.annotations.destructiveHint !== true;
}

export function mcpTool(connection: McpServerConnection, info: McpToolInfo, callTimeoutMs: number): AnyTool {
  const jsonSchema = modelSchema(info.inputSchema);
  const validate = compile(jsonSchema);
  const readOnly = isReadOnlyMcpTool(info);
  const destructive = info.annotations?.destructiveHint === true;
  const listing = isListingTool(info.name);
  // Ajv's words, one issue per problem, so the executor's "invalid input" message names them.
  const input = z.unknown().transform((value, ctx): Record<string, unknown> => {
    const args = value ?? {};
    const problem = validate(args);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    return isRecord(args) ? args : {};
  });
  const description = [info.description?.trim() || info.title || `${info.name} from the ${connection.name} MCP server`, destructive ? '(May delete or overwrite data.)' : '']
    .filter(Boolean)
    .join(' ');
  return {
    name: mcpToolName(connection.name, info.name),
    description: `[${connection.name}] ${description}`.slice(0, 1024),
    input: input as z.ZodType<unknown>,
    inputJsonSchema: jsonSchema,
    readOnly: () => readOnly,
    // A `path` argument (filesystem-like servers) meets the same sensitive-path and path rules as read_file;
    // every other string that names a file is checked in run().
    target: (args) => (isRecord(args) && typeof args.path === 'string' ? { path: args.path } : {}),
    async run(args, ctx): Promise<ToolOutput> {
      const reason = connection.unavailableReason();
      if (reason) return { content: `Not run: ${reason}.`, isError: true };
      const secret = secretArgument(args, ctx.isSensitivePath);
      if (secret !== undefined) return { content: `Permission denied: ${secret} is a sensitive path and is always denied`, isError: true };
      const timeoutMs = (connection.config.timeout_seconds ?? callTimeoutMs / 1000) * 1000;
      try {
        const result = await connection.callTool(info.name, isRecord(args) ? args : {}, ctx.signal, timeoutMs);
        const text = flattenResult(result);
        // A listing names what is there: the secrets' names stay out of it, as grep and glob skip them.
        return { content: listing ? withoutSecretNames(text, args, ctx.isSensitivePath) : text, isError: result.isError === true };
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        return { content: describeCallError(connection, info.name, error, timeoutMs), isError: true };
      }
    },
  };
}

/** `list_mcp_resources` and `read_mcp_resource` over every ready server. */
export function resourceTools(servers: () => McpServerConnection[], callTimeoutMs: number): AnyTool[] {
  const find = (name: string): McpServerConnection | undefined => servers().find((server) => server.name === name);
  return [
    defineTool({
      name: 'list_mcp_resources',
      description: 'List the resources (files, records, documents) that connected MCP servers offer. Optionally one server only.',
      input: z.strictObject({ server: z.string().optional().describe('Only this MCP server') }),
      readOnly: true,
      async run({ server }, ctx) {
        const targets = server ? [find(server)].filter((found) => found !== undefined) : servers();
        if (server && targets.length === 0) return { content: `No MCP server is called "${server}". Servers: ${servers().map((s) => s.name).join(', ') || 'none'}.`, isError: true };
        const lines: string[] = [];
        for (const target of targets) {
          const reason = target.unavailableReason();
          if (reason) {
            lines.push(`${target.name}: ${reason}`);
            continue;
          }
          try {
            const resources = await target.listResources(ctx.signal, callTimeoutMs);
            if (resources.length === 0) lines.push(`${target.name}: no resources`);
            for (const resource of resources) {
              // A file offered as a resource is listed only when read_file could read it.
              const path = /^file:/i.test(resource.uri) ? namedPath(resource.uri) : undefined;
              if (path !== undefined && ctx.isSensitivePath?.(path)) continue;
              lines.push(`${target.name}: ${resource.uri} — ${resource.name}${resource.mimeType ? ` (${resource.mimeType})` : ''}${resource.description ? `: ${resource.description}` : ''}`);
            }
          } catch (error) {
            lines.push(`${target.name}: could not list resources: ${errorMessage(error)}`);
          }
        }
        return lines.join('\n') || 'No MCP servers are connected.';
      },
    }),
    defineTool({
      name: 'read_mcp_resource',
      description: 'Read one resource of an MCP server by its URI (from list_mcp_resources).',
      input: z.strictObject({ server: z.string().min(1), uri: z.string().min(1) }),
      readOnly: true,
      async run({ server, uri }, ctx) {
        const target = find(server);
        if (!target) return { content: `No MCP server is called "${server}".`, isError: true };
        const reason = target.unavailableReason();
        if (reason) return { content: `Not read: ${reason}.`, isError: true };
        if (secretArgument(uri, ctx.isSensitivePath) !== undefined) return { content: `Permission denied: ${uri} is a sensitive path and is always denied`, isError: true };
        try {
          const result = await target.readResource(uri, ctx.signal, callTimeoutMs);
          return result.contents
            .map((item) => ('text' in item && typeof item.text === 'string' ? item.text : `[binary resource ${item.uri}${item.mimeType ? `, ${item.mimeType}` : ''}]`))
            .join('\n');
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          return { content: `Could not read ${uri} from ${server}: ${errorMessage(error)}`, isError: true };
        }
      },
    }),
  ];
}

/** Text for the model: text parts as they are, everything else named in brackets. */
function flattenResult(result: CallToolResult): string {
  const parts = result.content.map((item) => {
    switch (item.type) {
      case 'text':
        return item.text;
      case 'image':
      case 'audio':
        return `[${item.type} (${item.mimeType}), ${Math.round((item.data.length * 3) / 4)} bytes]`;
      case 'resource':
        return 'text' in item.resource && typeof item.resource.text === 'string' ? item.resource.text : `[resource ${item.resource.uri}]`;
      case 'resource_link':
        return `[resource ${item.uri}${item.name ? ` — ${item.name}` : ''}] (read it with read_mcp_resource)`;
      default:
        return '';
    }
  });
  const text = parts.filter(Boolean).join('\n');
  if (text) return text;
  if (result.structuredContent) return JSON.stringify(result.structuredContent);
  return result.isError ? 'The tool failed without saying why.' : '(no output)';
}

function describeCallError(connection: McpServerConnection, tool: string, error: unknown, timeoutMs: number): string {
  const message = errorMessage(error);
  if (/timed out|timeout/i.test(message)) return `The ${tool} tool of the MCP server "${connection.name}" did not answer within ${timeoutMs / 1000} s, so hob stopped waiting.`;
  const reason = connection.unavailableReason();
  if (reason) return `Not finished: ${reason}.`;
  return `The MCP server "${connection.name}" returned an error for ${tool}: ${message}`;
}

/** The schema as the API wants it: an object schema without `$schema`. */
function modelSchema(schema: McpToolInfo['inputSchema']): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

/** Returns a function giving the problem in words, or undefined when the input is valid. */
function compile(schema: Record<string, unknown>): (value: unknown) => string | undefined {
  try {
    const check = validator.getValidator(schema);
    return (value) => {
      const outcome = check(value);
      return outcome.valid ? undefined : outcome.errorMessage.replaceAll('data/', '').replaceAll('data ', 'input ');
    };
  } catch (error) {
    // A schema Ajv cannot compile: the server will check the input itself.
    const why = errorMessage(error);
    return (value) => (isRecord(value) ? undefined : `expected an object (the server's schema could not be compiled: ${why})`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
