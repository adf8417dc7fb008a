import { emptyUsage, type Message } from '../src/core/messages.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from '../src/providers/types.js';

/**
 * A model that answers at once, so a benchmark measures hob and nothing else. Stateless (the
 * reply depends only on the request), so any number of conversations can share it:
 * - with `toolName`, a request ending in the person's text gets one call to that tool;
 * - anything else (e.g. a request ending in tool results) gets a short text answer.
 * Unlike test/fakes/scripted-model.ts it does not deep-copy each request, which would grow
 * with the history and swamp the figures.
 */
export class InstantModel implements ProviderClient {
  readonly provider = 'instant';
  readonly model = 'instant-model';
  private nextId = 1;

  constructor(private readonly toolName?: string) {}

  async *stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
    const last = request.messages.at(-1);
    const answeringTools = last?.content.some((block) => block.type === 'tool_result') ?? false;
    const usage = { ...emptyUsage(), inputTokens: 10, outputTokens: 5 };
    if (this.toolName && !answeringTools) {
      const id = `toolu_${this.nextId++}`;
      const input = { text: 'ping' };
      yield { type: 'tool_use', id, name: this.toolName, input };
      const message: Message = { role: 'assistant', content: [{ type: 'tool_use', id, name: this.toolName, input }] };
      yield { type: 'done', message, stopReason: 'tool_use', usage, model: this.model };
      return;
    }
    yield { type: 'text_delta', text: 'Done.' };
    const message: Message = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
    yield { type: 'done', message, stopReason: 'end_turn', usage, model: this.model };
  }
}
