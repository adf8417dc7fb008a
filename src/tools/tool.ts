import { z } from 'zod';
import type { AgentEvent } from '../core/events.js';
import type { Interaction } from '../policy/types.js';
import type { ToolSpec } from '../providers/types.js';
import { toolJsonSchema } from './json-schema.js';

/** A chat, as a place to deliver to: platform, chat and thread ids. */
export type ChatOrigin = { platform: string; chatId: string; threadId?: string };

/** Per-call capabilities of one conversation. Tools never reach for module globals. */
export type ToolContext = {
  signal: AbortSignal;
  /** Absolute path of the workspace; relative paths resolve against it. */
  workspace: string;
  sessionKey: string;
  userId: string;
  interaction: Interaction;
  /** Streams a progress line to the person (e.g. a long command's output). */
  progress(text: string): void;
  /** Sends a workspace file into the chat, when the channel can. */
  sendFile?(path: string, caption?: string): Promise<void>;
  /**
   * Whether a path is one of the secrets hob never shows. The permission check sees only the
   * path a call names; a tool that walks a tree (grep, glob) must skip these on the way.
   */
  isSensitivePath?(path: string, resolved?: boolean): boolean;
  /** The run answers in a group chat: what a tool returns may be read by everyone there. */
  inGroup?: boolean;
  /**
   * Passes an event of a run this tool drives (a worker's tool calls) up to the run that
   * called it, which shows it in its progress message. Set by the executor for each call.
   */
  relay?(event: AgentEvent): void;
  /** The chat the run answers in: where a background task it starts delivers its result. */
  chat?: ChatOrigin;
  /** Set inside a worker: its name. A worker may not start workers or background tasks. */
  worker?: string;
};

export type ToolOutput = string | { content: string; isError?: boolean };

/** What the permission checker looks at: the path a call touches, the command it runs. */
export type PermissionTarget = { path?: string; command?: string };

export type Tool<Input = unknown> = {
  name: string;
  description: string;
  input: z.ZodType<Input>;
  /**
   * The JSON Schema the model sees, when the tool came with one (an MCP server's); otherwise
   * it is derived from `input`.
   */
  inputJsonSchema?: Record<string, unknown>;
  /** Read-only calls run concurrently and are allowed without asking in default mode. */
  readOnly(input: Input): boolean;
  /** The path and/or command this call touches, for permission rules and approval prompts. */
  target?(input: Input): PermissionTarget;
  /** Throwing is fine: the executor turns it into an is_error result for the model. */
  run(input: Input, ctx: ToolContext): Promise<ToolOutput>;
};

/** The erased form the registry holds. */
export type AnyTool = Tool<unknown>;

export function defineTool<Schema extends z.ZodType>(tool: {
  name: string;
  description: string;
  input: Schema;
  readOnly: boolean | ((input: z.infer<Schema>) => boolean);
  target?: (input: z.infer<Schema>) => PermissionTarget;
  run(input: z.infer<Schema>, ctx: ToolContext): Promise<ToolOutput>;
}): Tool<z.infer<Schema>> {
  const readOnly = tool.readOnly;
  return {
    name: tool.name,
    description: tool.description,
    // A schema's output type is its infer type; TypeScript cannot see that through the generic.
    input: tool.input as z.ZodType<z.infer<Schema>>,
    readOnly: typeof readOnly === 'function' ? readOnly : () => readOnly,
    target: tool.target,
    run: tool.run,
  };
}

/** Output longer than this is cut in one place, with a note the model can act on. */
export const MAX_TOOL_OUTPUT_CHARS = 30_000;

export function truncateOutput(content: string, limit = MAX_TOOL_OUTPUT_CHARS): string {
  if (content.length <= limit) return content;
  const head = Math.floor(limit * 0.7);
  const tail = limit - head;
  const dropped = content.length - head - tail;
  return (
    content.slice(0, head) +
    `\n\n[… ${dropped} characters cut: the output was ${content.length} characters. ` +
    `Narrow the command or read a range to see the middle …]\n\n` +
    content.slice(content.length - tail)
  );
}

/** Validation errors phrased for the model, naming each bad field. */
export function describeInputError(toolName: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : '(input)';
    return `- ${where}: ${issue.message}`;
  });
  return (
    `The ${toolName} tool was called with invalid input:\n${problems.join('\n')}\n` +
    `Rewrite the input so it matches the tool's schema and call it again.`
  );
}

/**
 * The tools a run may use, as the loop reads them: a whole registry, or a view of one (a
 * worker's subset). `get` looks names up by own entry only.
 */
export type ToolSet = Pick<ToolRegistry, 'get' | 'list' | 'names' | 'specs'>;

/**
 * The tools one hob process offers. Built-ins are fixed at start; extensions (MCP servers)
 * come and go as named groups. The order the model sees is stable — built-ins in the order
 * given, then groups by name, tools by name — so a refreshed group that did not change
 * leaves the cached prompt prefix intact, and one that did invalidates it only once.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private readonly groups = new Map<string, AnyTool[]>();
  private ordered: AnyTool[] | undefined;

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyTool): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
    this.changed();
  }

  /**
   * Replaces every tool of one group (an empty list removes it). A tool whose name is taken
   * by a built-in or another group is left out and named in the returned list.
   */
  replaceGroup(group: string, tools: AnyTool[]): string[] {
    const taken = new Set([...this.tools.keys(), ...[...this.groups].filter(([name]) => name !== group).flatMap(([, list]) => list.map((tool) => tool.name))]);
    const kept: AnyTool[] = [];
    const skipped: string[] = [];
    for (const tool of [...tools].sort((a, b) => compare(a.name, b.name))) {
      if (taken.has(tool.name)) skipped.push(tool.name);
      else {
        taken.add(tool.name);
        kept.push(tool);
      }
    }
    const before = this.groups.get(group) ?? [];
    if (kept.length) this.groups.set(group, kept);
    else this.groups.delete(group);
    if (before.length !== kept.length || before.some((tool, index) => tool !== kept[index])) this.changed();
    return skipped;
  }

  /** Own-entry lookup: names come from the model, so `__proto__` or `toString` find nothing. */
  get(name: string): AnyTool | undefined {
    return this.tools.get(name) ?? this.all().find((tool) => tool.name === name);
  }

  list(): AnyTool[] {
    return [...this.all()];
  }

  names(): string[] {
    return this.all().map((tool) => tool.name);
  }

  /** Specs for the API, computed once per change of the list (so prompt caching holds). */
  specs(): ToolSpec[] {
    this.cachedSpecs ??= this.all().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputJsonSchema ?? toolJsonSchema(tool.input),
    }));
    return this.cachedSpecs;
  }
  private cachedSpecs: ToolSpec[] | undefined;

  private all(): AnyTool[] {
    this.ordered ??= [...this.tools.values(), ...[...this.groups.keys()].sort(compare).flatMap((group) => this.groups.get(group) ?? [])];
    return this.ordered;
  }

  private changed(): void {
    this.ordered = undefined;
    this.cachedSpecs = undefined;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
