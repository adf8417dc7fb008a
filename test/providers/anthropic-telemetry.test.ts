import '../support/env.js';
import { INVALID_SPAN_CONTEXT, trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { collect, request, textOf } from './collect.js';

/**
 * The Anthropic SDK builds an OpenTelemetry span for each request unless told not to. hob builds
 * none, unless the person asks for them with the SDK's own ANTHROPIC_OPEN_TELEMETRY (they run an
 * OpenTelemetry SDK beside hob): a tracer provider registered in the process sees the requests
 * only then.
 */
const spans: string[] = [];
const span = (): Span => trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
const tracer = {
  startSpan: (name: string) => {
    spans.push(name);
    return span();
  },
  startActiveSpan: (name: string, ...rest: unknown[]) => {
    spans.push(name);
    return (rest.at(-1) as (span: Span) => unknown)(span());
  },
} as Tracer;
const provider: TracerProvider = { getTracer: () => tracer };

const signal = new AbortController().signal;
let fake: FakeAnthropic;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  fake = await startFakeAnthropic({ apiKey: 'sk-ant-test' });
});
afterAll(async () => {
  trace.disable();
  await fake.close();
});
afterEach(() => {
  delete process.env.ANTHROPIC_OPEN_TELEMETRY;
  spans.length = 0;
});

const ask = async (): Promise<string> => {
  fake.push({ text: 'hello' });
  const client = createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-6' });
  return textOf(await collect(client.stream(request('hi'), signal)));
};

describe('anthropic provider: OpenTelemetry spans', () => {
  it('builds none by default, with a tracer provider registered', async () => {
    expect(await ask()).toBe('hello');
    expect(spans).toEqual([]);
  });

  it('gives each request to the tracer provider when ANTHROPIC_OPEN_TELEMETRY asks for it', async () => {
    process.env.ANTHROPIC_OPEN_TELEMETRY = 'true';
    expect(await ask()).toBe('hello');
    expect(spans).toEqual([expect.stringContaining('messages')]);
  });

  it('builds none when ANTHROPIC_OPEN_TELEMETRY says false', async () => {
    process.env.ANTHROPIC_OPEN_TELEMETRY = 'false';
    expect(await ask()).toBe('hello');
    expect(spans).toEqual([]);
  });
});
