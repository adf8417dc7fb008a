import { z } from 'zod';
import type { Interaction } from '../policy/types.js';
import type { ToolSpec } from '../providers/types.js';

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
};

export type ToolOutput = string | { content: string; isError?: boolean };

/** What the permission checker looks at: the path a call touches, the command it runs. */
export type PermissionTarget = { path?: string; command?: string };

export type Tool<Input = unknown> = {
  name: string;
  description: string;
  input: z.ZodType<Input>;
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

export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AnyTool): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
    this.cachedSpecs = undefined;
  }

  /** Own-entry lookup: names come from the model, so `__proto__` or `toString` find nothing. */
  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  list(): AnyTool[] {
    return [...this.tools.values()];
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Specs for the API, computed once per registry (the list is stable, so prompt caching holds). */
  specs(): ToolSpec[] {
    this.cachedSpecs ??= this.list().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: toJsonSchema(tool.input),
    }));
    return this.cachedSpecs;
  }
  private cachedSpecs: ToolSpec[] | undefined;
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
