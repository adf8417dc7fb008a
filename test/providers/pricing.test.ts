import { describe, expect, it } from 'vitest';
import { costUsd, priceOf } from '../../src/providers/pricing.js';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe('pricing', () => {
  it('prices a Claude call including cache reads and writes', () => {
    // Sonnet 4.x: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million
    expect(costUsd('claude-sonnet-4-6', usage(1_000_000, 100_000, 2_000_000, 400_000))).toBeCloseTo(3 + 1.5 + 0.6 + 1.5, 6);
  });

  it('prices an OpenAI call with cached input', () => {
    expect(costUsd('gpt-4o', usage(1_000_000, 1_000_000, 1_000_000))).toBeCloseTo(2.5 + 10 + 1.25, 6);
  });

  it('matches dated snapshots and router prefixes to the most specific family', () => {
    expect(priceOf('claude-haiku-4-5-20251001')?.input).toBe(1);
    expect(priceOf('openai/gpt-4o-mini')?.input).toBe(0.15);
    expect(priceOf('claude-opus-4-1-20250805')?.input).toBe(15);
    expect(priceOf('claude-opus-4-8')?.input).toBe(5);
  });

  it('costs 0 for a model it does not know', () => {
    expect(costUsd('llama3.1:8b', usage(1_000_000, 1_000_000))).toBe(0);
  });
});
