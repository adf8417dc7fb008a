import { describe, expect, it } from 'vitest';
import { PromptTooLongError, ProviderError } from '../../src/core/errors.js';
import type { Message } from '../../src/core/messages.js';
import type { HookGate } from '../../src/engine/ports.js';
import { autoCompactThreshold, compactionTarget, CompactionFailed, Compactor, defaultBuffer, SUMMARY_SYSTEM, type CompactionSettings } from '../../src/engine/compaction/compactor.js';
import { staticWindow } from '../../src/providers/context-window.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { ScriptedModel } from '../fakes/scripted-model.js';

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const said = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** Many plain rounds of chat: nothing for levels 1 and 2 to take, so only summaries help. */
function chat(rounds: number, words = 120): Message[] {
  const history: Message[] = [];
  for (let i = 0; i < rounds; i += 1) history.push(user(`Question ${i}: ${'lorem ipsum '.repeat(words / 2)}`), said(`Answer ${i}: ${'dolor sit '.repeat(words / 2)}`));
  history.push(user('And the newest question?'));
  return history;
}

function recordingHooks(): HookGate & { events: Array<{ event: string; payload: Record<string, unknown> }> } {
  const events: Array<{ event: string; payload: Record<string, unknown> }> = [];
  return { events, run: async (event, payload) => (events.push({ event, payload }), { blocked: false }) };
}

const settings = (contextWindow: number): CompactionSettings => ({ contextWindow, maxTokens: 1_000, bufferTokens: 500, keepRecent: 4 });
const prompt = (messages: Message[]) => ({ system: 'system', tools: [], messages });
/** Sizes as a provider counting characters / 4 would give them, so the arithmetic below does not hang on hob's estimator. */
const measure = (messages: readonly Message[]) => Math.ceil((6 + JSON.stringify(messages).length) / 4);
const options = { carried: '<carried-state>\nTask in progress: answer the newest question\n</carried-state>', sessionKey: 'k', measure };

describe('trigger arithmetic', () => {
  it('compacts before a request above window − max_tokens − buffer, and aims lower', () => {
    const s = { contextWindow: 32_000, maxTokens: 4_096, bufferTokens: defaultBuffer(32_000) };
    expect(s.bufferTokens).toBe(3_200);
    expect(autoCompactThreshold(s)).toBe(24_704);
    expect(compactionTarget(s, 'auto')).toBe(Math.floor(24_704 * 0.7));
    expect(compactionTarget(s, 'manual')).toBe(Math.floor(24_704 * 0.5));
  });

  it('keeps at most a quarter of a small window for the answer, whatever max_tokens says', () => {
    // 8,192 answer tokens of a 4,096 window would leave nothing: the answer keeps 1,024.
    expect(autoCompactThreshold({ contextWindow: 4_096, maxTokens: 8_192, bufferTokens: defaultBuffer(4_096) })).toBe(4_096 - 1_024 - 409);
    expect(autoCompactThreshold({ contextWindow: 8_000, maxTokens: 1_024, bufferTokens: defaultBuffer(8_000) })).toBe(8_000 - 1_024 - 800);
  });

  it('knows common context windows and takes a configured one over them', () => {
    expect(staticWindow('claude-sonnet-4-5').tokens).toBe(200_000);
    expect(staticWindow('gpt-4o-mini').tokens).toBe(128_000);
    expect(staticWindow('gpt-4.1-mini').tokens).toBe(1_047_576);
    expect(staticWindow('openai/gpt-4o').tokens).toBe(128_000);
    expect(staticWindow('llama3.1:8b')).toMatchObject({ tokens: 128_000, source: 'default' });
    expect(staticWindow('llama3.1:8b', 8_192)).toMatchObject({ tokens: 8_192, source: 'config' });
  });
});

describe('Compactor', () => {
  it('stops at the first level that frees enough, and fires pre_compact and post_compact', async () => {
    const history: Message[] = [user('read them all')];
    for (let i = 0; i < 12; i += 1) {
      history.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `f${i}` } }] });
      history.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: `t${i}`, content: 'x '.repeat(2_000), isError: false }] });
    }
    history.push(said('done'), user('thanks; what next?'));
    const hooks = recordingHooks();
    const model = new ScriptedModel();
    const compactor = new Compactor({ provider: () => model, hooks, settings: () => settings(30_000) });
    const result = await compactor.compact(prompt(history), { ...options, trigger: 'auto' });
    expect(result?.level).toBe(1);
    expect(result?.tokensAfter).toBeLessThanOrEqual(compactionTarget(settings(30_000), 'auto'));
    expect(model.requests).toHaveLength(0);
    expect(hooks.events.map((e) => e.event)).toEqual(['pre_compact', 'post_compact']);
    expect(hooks.events[1]?.payload).toMatchObject({ trigger: 'auto', level: 1 });
  });

  it('goes on to the model summary only when the outline is not enough, keeping <summary> and dropping <analysis>', async () => {
    const history = chat(40, 300);
    const model = new ScriptedModel([{ text: '<analysis>thinking aloud</analysis>\n<summary>The person asked 40 questions about lorem ipsum.</summary>' }]);
    const size = measure(history);
    // A window where the outline with the recent messages is too big, but a two-line summary fits.
    const compactor = new Compactor({ provider: () => model, hooks: recordingHooks(), settings: () => ({ contextWindow: 2_600, maxTokens: 1_000, bufferTokens: 260, keepRecent: 3 }) });
    expect(size).toBeGreaterThan(10_000);
    const result = await compactor.compact(prompt(history), { ...options, trigger: 'auto' });
    expect(result?.level).toBe(4);
    expect(result?.saved.map((s) => s.level)).toContain(3);
    const first = JSON.stringify(result?.messages[0]);
    expect(first).toContain('The person asked 40 questions about lorem ipsum.');
    expect(first).not.toContain('thinking aloud');
    expect(first).toContain('Task in progress: answer the newest question');
    expect(model.requests[0]?.system).toBe(SUMMARY_SYSTEM);
  });

  it('drops the oldest part and retries when the summary request itself is too long', async () => {
    const history = chat(40, 300);
    const model = new ScriptedModel([
      { error: new PromptTooLongError('prompt is too long') },
      { error: new PromptTooLongError('prompt is too long') },
      { text: '<summary>short</summary>' },
    ]);
    const compactor = new Compactor({ provider: () => model, hooks: recordingHooks(), settings: () => ({ contextWindow: 2_600, maxTokens: 1_000, bufferTokens: 260, keepRecent: 3 }) });
    const result = await compactor.compact(prompt(history), { ...options, trigger: 'auto' });
    expect(result?.level).toBe(4);
    const sizes = model.requests.map((r: ProviderRequest) => JSON.stringify(r.messages).length);
    expect(sizes[1]).toBeLessThan(sizes[0] as number);
    expect(sizes[2]).toBeLessThan(sizes[1] as number);
    expect(JSON.stringify(model.requests[2]?.messages)).toContain('oldest entries were left out');
  });

  it('after three failed summaries stops asking the model, but still compacts as far as needed, until a summary succeeds', async () => {
    const history = chat(40, 300);
    const failing = () => ({ error: new ProviderError('overloaded', { retryable: true }) });
    const model = new ScriptedModel([failing(), failing(), failing()]);
    const tiny = { contextWindow: 2_600, maxTokens: 1_000, bufferTokens: 260, keepRecent: 3 };
    const compactor = new Compactor({ provider: () => model, hooks: recordingHooks(), settings: () => tiny });
    for (let i = 0; i < 3; i += 1) {
      // The summary failed, yet the history still got under the target: the outline, with fewer recent messages kept.
      const result = await compactor.compact(prompt(history), { ...options, trigger: 'auto' });
      expect(result?.underTarget).toBe(true);
      expect(result?.level).toBe(3);
    }
    expect(compactor.tripped).toBe(true);
    const afterTrip = await compactor.compact(prompt(history), { ...options, trigger: 'auto' });
    expect(afterTrip?.underTarget).toBe(true);
    expect(model.requests).toHaveLength(3);
    // A manual /compact still asks the model, and its success re-arms the summaries.
    model.push({ text: '<summary>ok</summary>' });
    expect((await compactor.compact(prompt(history), { ...options, trigger: 'manual' }))?.level).toBe(4);
    expect(compactor.tripped).toBe(false);
  });

});
