/** Conversation messages as hob stores them and hands them to providers. */

export type TextBlock = { type: 'text'; text: string };
export type ImageBlock = {
  type: 'image';
  /** IANA media type, e.g. image/png. */
  mediaType: string;
  /** Base64 without a data: prefix. */
  data: string;
};
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown };
export type ToolResultBlock = {
  type: 'tool_result';
  toolUseId: string;
  content: string;
  isError: boolean;
};

/**
 * A thinking model's reasoning, stored with its message exactly as received: Anthropic
 * requires a tool-calling turn's thinking (with its signature) back unmodified, also when the
 * tool loop resumes after a restart. Other providers never see these blocks.
 */
export type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
export type RedactedThinkingBlock = { type: 'redacted_thinking'; data: string };

export type Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

/**
 * One turn of the conversation. Contract: every tool_use block in an assistant message is
 * answered by exactly one tool_result block in the following user message.
 */
export type Message = { role: 'user' | 'assistant'; content: Block[] };

export type Usage = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
};

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

export const text = (value: string): TextBlock => ({ type: 'text', text: value });
export const userText = (value: string): Message => ({ role: 'user', content: [text(value)] });

/** The plain text of a message's text blocks, joined. */
export function messageText(message: Message): string {
  return message.content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

/** A message the person wrote (not a tool-results message the loop appended). */
export function isPersonMessage(message: Message): boolean {
  return message.role === 'user' && !message.content.some((block) => block.type === 'tool_result');
}

export function toolUses(message: Message): ToolUseBlock[] {
  return message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}
