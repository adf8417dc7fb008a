/**
 * hob messages → Anthropic Messages API request params, including prompt-cache breakpoints
 * and the replay of thinking blocks during a tool loop.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { isPersonMessage, type Block, type Message } from '../core/messages.js';
import type { ProviderRequest, ToolSpec } from './types.js';

export type WireBlock =
  | Anthropic.TextBlockParam
  | Anthropic.ImageBlockParam
  | Anthropic.ToolUseBlockParam
  | Anthropic.ToolResultBlockParam
  | Anthropic.ThinkingBlockParam
  | Anthropic.RedactedThinkingBlockParam;

/**
 * Assistant turns exactly as the API returned them, kept while a tool loop may still need
 * them. Models that think (on by default on newer Claude models) require the thinking blocks
 * of a tool-calling turn to come back unmodified, in order, with their signatures; hob's
 * Message has no thinking block, so the provider remembers them, keyed by the turn's first
 * tool_use id (unique per call). Only the current tool cycle needs them, so a bounded,
 * oldest-first memory is enough. Lost on restart: a tool loop resumed after a restart is
 * sent without its thinking.
 */
export class ThinkingMemory {
  private readonly turns = new Map<string, { model: string; blocks: WireBlock[] }>();
  constructor(private readonly limit = 1000) {}

  remember(toolUseId: string, model: string, blocks: WireBlock[]): void {
    this.turns.set(toolUseId, { model, blocks });
    for (const oldest of this.turns.keys()) {
      if (this.turns.size <= this.limit) break;
      this.turns.delete(oldest);
    }
  }

  /** The turn as received, if `message` still matches it block for block and the model is the same. */
  recall(message: Message, model: string): WireBlock[] | undefined {
    const firstToolUse = message.content.find((block) => block.type === 'tool_use');
    if (!firstToolUse) return undefined;
    const turn = this.turns.get(firstToolUse.id);
    if (!turn || turn.model !== model) return undefined;
    const visible = turn.blocks.filter((block) => block.type === 'text' || block.type === 'tool_use');
    const current = message.content.filter((block) => block.type === 'text' || block.type === 'tool_use').flatMap(toWireBlock);
    return sameBlocks(visible, current) ? turn.blocks.map((block) => ({ ...block })) : undefined;
  }
}

/** Compaction may have rewritten the turn; then replaying the old one would be wrong. */
function sameBlocks(a: WireBlock[], b: WireBlock[]): boolean {
  return a.length === b.length && a.every((block, i) => JSON.stringify(block) === JSON.stringify(b[i]));
}

const ephemeral = { type: 'ephemeral' as const };

/** Thinking must lead its turn; a turn rewritten since (text put before it) is sent without it. */
const isThinking = (block: Block): boolean => block.type === 'thinking' || block.type === 'redacted_thinking';

export function toParams(
  request: ProviderRequest,
  model: string,
  caching: boolean,
  memory: ThinkingMemory,
): Anthropic.MessageCreateParamsStreaming {
  // Only the current tool loop's thinking must come back; older turns' thinking is dropped
  // (the API ignores it anyway, and a signature from another model would be refused).
  const loopStart = request.messages.findLastIndex(isPersonMessage);
  const messages = request.messages
    .map((message, index) => ({
      role: message.role,
      content:
        (message.role === 'assistant' && memory.recall(message, model)) ||
        message.content.filter((block, at) => !isThinking(block) || (index > loopStart && message.content.slice(0, at).every(isThinking))).flatMap(toWireBlock),
    }))
    .filter((message) => message.content.length > 0);
  const tools = request.tools.map(toTool);
  if (caching) {
    // A copy: the wire forms are shared by every request (toTool).
    const lastTool = tools.at(-1);
    if (lastTool) tools[tools.length - 1] = { ...lastTool, cache_control: ephemeral };
    // A rolling breakpoint on the newest block caches the conversation so far: each step of
    // a tool loop re-reads the history at cache price instead of full input price.
    const lastBlock = messages.at(-1)?.content.at(-1);
    if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking') lastBlock.cache_control = ephemeral;
  }
  const params: Anthropic.MessageCreateParamsStreaming = {
    model,
    max_tokens: request.maxTokens,
    messages,
    stream: true,
  };
  if (request.system) {
    params.system = [{ type: 'text', text: request.system, ...(caching ? { cache_control: ephemeral } : {}) }];
  }
  if (tools.length > 0) params.tools = tools;
  return params;
}

const imageTypes = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
type ImageType = (typeof imageTypes)[number];
const isImageType = (value: string): value is ImageType => (imageTypes as readonly string[]).includes(value);

function toWireBlock(block: Block): WireBlock[] {
  switch (block.type) {
    case 'text':
      // The API rejects empty text blocks.
      return block.text ? [{ type: 'text', text: block.text }] : [];
    case 'image':
      if (!isImageType(block.mediaType)) return [{ type: 'text', text: `[image omitted: ${block.mediaType} is not supported]` }];
      return [{ type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } }];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: asObject(block.input) }];
    case 'tool_result':
      return [{ type: 'tool_result', tool_use_id: block.toolUseId, content: block.content, is_error: block.isError }];
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    default: {
      const unknownBlock: never = block;
      return unknownBlock;
    }
  }
}

/** tool_use input must be a JSON object on the wire. */
export function asObject(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { value: input };
}

/** Specs are never changed in place: each becomes its wire form once (every request sends them all). */
const wireTools = new WeakMap<ToolSpec, Anthropic.Tool>();

function toTool(spec: ToolSpec): Anthropic.Tool {
  let tool = wireTools.get(spec);
  if (!tool) {
    tool = { name: spec.name, description: spec.description, input_schema: { ...spec.inputSchema, type: 'object' } };
    wireTools.set(spec, tool);
  }
  return tool;
}
