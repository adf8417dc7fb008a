/**
 * List prices in USD per million tokens, for the usage report. Estimates: prices change,
 * batch and regional discounts are ignored, and an unknown model costs 0 (not a guess).
 */
import type { Usage } from '../core/messages.js';

export type Price = { input: number; output: number; cacheRead: number; cacheWrite: number };

const anthropic = (input: number, output: number): Price => ({
  input,
  output,
  cacheRead: input * 0.1,
  cacheWrite: input * 1.25, // 5-minute cache writes
});

/** OpenAI bills cache writes as plain input; cached reads at their own rate. */
const openai = (input: number, cacheRead: number, output: number): Price => ({ input, output, cacheRead, cacheWrite: input });

/**
 * Keys are model-name prefixes; the longest matching prefix wins, so dated snapshots match
 * their family. Published list prices, read 2026-10 (Anthropic: base input, output, cache
 * hits, 5-minute cache writes; OpenAI: input, cached input, output).
 */
const prices: Record<string, Price> = {
  'claude-fable-5-1': { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 },
  'claude-fable-5': { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 },
  'claude-mythos-5-1': { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 },
  'claude-mythos-5': { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 },
  'claude-opus-5-5': anthropic(4, 20),
  'claude-opus-5': anthropic(5, 25),
  'claude-opus-4-5': anthropic(5, 25),
  'claude-opus-4-6': anthropic(5, 25),
  'claude-opus-4-7': anthropic(5, 25),
  'claude-opus-4-8': anthropic(5, 25),
  'claude-opus-4': anthropic(15, 75),
  'claude-sonnet-5-5': { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
  'claude-sonnet-5': anthropic(2, 10),
  'claude-sonnet-4': anthropic(3, 15),
  'claude-3-7-sonnet': anthropic(3, 15),
  'claude-3-5-sonnet': anthropic(3, 15),
  // Haiku 5.5 costs more past 100k prompt tokens; the table uses the lower band.
  'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 },
  'claude-haiku-4': anthropic(1, 5),
  'claude-3-5-haiku': anthropic(0.8, 4),
  'claude-3-haiku': anthropic(0.25, 1.25),
  'claude-3-opus': anthropic(15, 75),
  'gpt-5.4': openai(2.5, 0.25, 15),
  'gpt-5.4-mini': openai(0.75, 0.075, 4.5),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  o3: openai(2, 0.5, 8),
  'o3-mini': openai(1.1, 0.55, 4.4),
  'o4-mini': openai(1.1, 0.275, 4.4),
};

const prefixes = Object.keys(prices).sort((a, b) => b.length - a.length);

/** The price of `model`, or undefined. Router prefixes like "openai/gpt-4o" are ignored. */
export function priceOf(model: string): Price | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  const prefix = prefixes.find((candidate) => name.startsWith(candidate));
  return prefix === undefined ? undefined : prices[prefix];
}

/** Cost of one call in USD; 0 for models not in the table. */
export function costUsd(model: string, usage: Usage): number {
  const price = priceOf(model);
  if (!price) return 0;
  return (
    (usage.inputTokens * price.input +
      usage.outputTokens * price.output +
      usage.cacheReadTokens * price.cacheRead +
      usage.cacheWriteTokens * price.cacheWrite) /
    1_000_000
  );
}
