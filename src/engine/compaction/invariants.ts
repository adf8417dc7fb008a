/**
 * What every compacted history must still satisfy, for both providers: it starts with the
 * person, roles alternate (Anthropic), every tool_use is answered by a tool_result in the very
 * next message and every tool_result answers one (Anthropic and OpenAI's role:"tool" rule),
 * and the person's newest message is there whole.
 */
import { isPersonMessage, type Block, type Message } from '../../core/messages.js';

export function newestPersonMessage(messages: readonly Message[]): Message | undefined {
  return messages.findLast(isPersonMessage);
}

/** Problems found, in words; empty when the history is sound. */
export function invariantProblems(messages: readonly Message[], newest?: Message): string[] {
  const problems: string[] = [];
  if (messages.length === 0) return problems;
  if (messages[0]?.role !== 'user') problems.push('the history does not start with a user message');
  messages.forEach((message, index) => {
    if (message.content.length === 0) problems.push(`message ${index} is empty`);
    const previous = messages[index - 1];
    if (previous && previous.role === message.role) problems.push(`messages ${index - 1} and ${index} are both ${message.role}`);
    const calls = message.role === 'assistant' ? message.content.filter((block) => block.type === 'tool_use') : [];
    const next = messages[index + 1];
    for (const call of calls) {
      if (call.type !== 'tool_use') continue;
      const answered = next?.content.some((block) => block.type === 'tool_result' && block.toolUseId === call.id);
      // The last message may be a tool call still waiting for its results.
      if (!answered && next) problems.push(`tool_use ${call.id} in message ${index} has no tool_result after it`);
    }
    if (message.role === 'user') {
      const asked = new Set(previous?.role === 'assistant' ? previous.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])) : []);
      for (const block of message.content) {
        if (block.type === 'tool_result' && !asked.has(block.toolUseId)) problems.push(`tool_result ${block.toolUseId} in message ${index} answers no tool_use`);
      }
    }
  });
  if (newest) {
    const kept = messages.some((message) => message.role === 'user' && containsAll(message.content, newest.content));
    if (!kept) problems.push("the person's newest message is not kept whole");
  }
  return problems;
}

function containsAll(haystack: readonly Block[], needles: readonly Block[]): boolean {
  const serialized = haystack.map((block) => JSON.stringify(block));
  let from = 0;
  for (const needle of needles) {
    const at = serialized.indexOf(JSON.stringify(needle), from);
    if (at < 0) return false;
    from = at + 1;
  }
  return true;
}
