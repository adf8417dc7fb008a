/** What a conversation's history says is still to do when a run starts or hob restarts. */
import { toolUses, type Message, type ToolResultBlock } from '../core/messages.js';

export type PendingWork = { kind: 'none' } | { kind: 'user_waiting' } | { kind: 'unanswered_tools'; results: ToolResultBlock[] };

/**
 * Nothing; a message from the person not answered yet; or tool calls a crash or restart cut
 * off, with the results that answer them (they may or may not have run; `notStarted` ones
 * were still waiting for an approval and certainly did not).
 */
export function pendingWork(history: readonly Message[], notStarted: ReadonlySet<string> = new Set()): PendingWork {
  const last = history.at(-1);
  if (!last) return { kind: 'none' };
  if (last.role === 'user') return { kind: 'user_waiting' };
  const calls = toolUses(last);
  if (calls.length === 0) return { kind: 'none' };
  return {
    kind: 'unanswered_tools',
    results: calls.map((call) => ({
      type: 'tool_result',
      toolUseId: call.id,
      content: notStarted.has(call.id)
        ? 'Not run: hob restarted while this call waited for approval. Call it again if it is still needed.'
        : 'Interrupted: hob stopped before this call finished, so it may or may not have run. Check its effect before repeating it.',
      isError: true,
    })),
  };
}
