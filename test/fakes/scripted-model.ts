import { ProviderError } from '../../src/core/errors.js';
import { emptyUsage, type Block, type Message } from '../../src/core/messages.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from '../../src/providers/types.js';

/** One scripted model reply. */
export type ScriptedReply =
  | { text: string; toolCalls?: { name: string; input: unknown; id?: string }[] }
  | { toolCalls: { name: string; input: unknown; id?: string }[]; text?: string }
  | { error: ProviderError }
  /** Streams `text` (if any), then waits until the run is aborted. */
  | { hang: true; text?: string }
  /** Streams `text` up to `pauseAt` characters, waits for `resume`, then streams the rest and ends. */
  | { text: string; pauseAt: number; resume: Promise<unknown>; toolCalls?: undefined };

export type ScriptedStep = ScriptedReply | ((request: ProviderRequest) => ScriptedReply);

/**
 * An in-process model for loop tests: replies come from a script, one per call, and every
 * request is recorded (deep-copied). When the script runs out it answers "(script ended)".
 */
export class ScriptedModel implements ProviderClient {
  readonly provider = 'scripted';
  readonly requests: ProviderRequest[] = [];
  private nextId = 1;
  /** How many input tokens each request reports (default 10); compaction tests count the prompt. */
  countInput: (request: ProviderRequest) => number = () => 10;

  constructor(
    private readonly script: ScriptedStep[] = [],
    readonly model = 'scripted-model',
  ) {}

  push(...steps: ScriptedStep[]): this {
    this.script.push(...steps);
    return this;
  }

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    this.requests.push(structuredClone(request));
    const step = this.script.shift() ?? { text: '(script ended)' };
    const reply = typeof step === 'function' ? step(request) : step;
    if ('error' in reply) {
      yield { type: 'error', error: reply.error, streamed: false };
      return;
    }
    const content: Block[] = [];
    if ('pauseAt' in reply) {
      for (const piece of splitWords(reply.text.slice(0, reply.pauseAt))) yield { type: 'text_delta', text: piece };
      await reply.resume;
      for (const piece of splitWords(reply.text.slice(reply.pauseAt))) yield { type: 'text_delta', text: piece };
    } else if (reply.text) {
      for (const piece of splitWords(reply.text)) yield { type: 'text_delta', text: piece };
    }
    if (reply.text) content.push({ type: 'text', text: reply.text });
    if ('hang' in reply) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      yield { type: 'error', error: new ProviderError('aborted', { retryable: false }), streamed: Boolean(reply.text) };
      return;
    }
    for (const call of reply.toolCalls ?? []) {
      const id = call.id ?? `toolu_${this.nextId++}`;
      yield { type: 'tool_use', id, name: call.name, input: call.input };
      content.push({ type: 'tool_use', id, name: call.name, input: call.input });
    }
    const message: Message = { role: 'assistant', content };
    const usage = { ...emptyUsage(), inputTokens: this.countInput(request), outputTokens: 5 };
    const stopReason = reply.toolCalls?.length ? 'tool_use' : 'end_turn';
    yield { type: 'done', message, stopReason, usage, model: this.model };
  }
}

function splitWords(value: string): string[] {
  return value.match(/\S+\s*|\s+/g) ?? [value];
}
