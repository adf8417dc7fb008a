/** Small helpers shared by the provider tests. */
import type { ProviderEvent, ProviderRequest } from '../../src/providers/types.js';

export async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

export const textOf = (events: ProviderEvent[]): string =>
  events.map((event) => (event.type === 'text_delta' ? event.text : '')).join('');

export function last(events: ProviderEvent[]): ProviderEvent {
  const event = events.at(-1);
  if (!event) throw new Error('no events');
  return event;
}

/** The final event, asserted to be `done`. */
export function doneOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: 'done' }> {
  const event = last(events);
  if (event.type !== 'done') throw new Error(`expected done, got ${JSON.stringify(event)}`);
  return event;
}

/** The final event, asserted to be `error`. */
export function errorOf(events: ProviderEvent[]): Extract<ProviderEvent, { type: 'error' }> {
  const event = last(events);
  if (event.type !== 'error') throw new Error(`expected error, got ${JSON.stringify(event)}`);
  return event;
}

/** A sleep that records each requested delay and returns at once. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

export const request = (text: string, extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
  system: 'You are hob.',
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  tools: [],
  maxTokens: 1024,
  ...extra,
});
