import '../support/env.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { AgentEvent } from '../../src/core/events.js';
import { messageText, toolUses, type Message } from '../../src/core/messages.js';
import { promptTokens } from '../fakes/model-servers.js';
import { answering, collect } from '../support/engine.js';
import { carriesWhole, FACT, FACT_ANSWER, hobOnLocalServer, isSummaryRequest, personMessage, scriptedAnswer, stopLocalServers, unansweredCalls } from '../support/small-window.js';

/**
 * issue 17: a conversation never dies in a small window. The server is vLLM-strict (it refuses
 * a prompt whose prompt plus max_tokens exceeds the window, and counts characters / 4), hob
 * runs with its whole prompt and tool set, through the real OpenAI SDK.
 */

afterEach(stopLocalServers);

async function smallWindowApp(contextWindow: number) {
  const hob = await hobOnLocalServer({ server: 'vllm', contextWindow, model: { id: 'local-model' } }, `name: local-model, context_window: ${contextWindow}, max_tokens: 1024`);
  hob.fake.respondWith((request) => scriptedAnswer(request.body));
  return hob;
}

const say = (engine: ReturnType<App['engine']>, text: string) => collect(engine.submit(text, { userId: 'local', interaction: answering(), signal: new AbortController().signal }));
const answerOf = (events: AgentEvent[]): string =>
  messageText(events.flatMap((event) => (event.type === 'assistant_message' && toolUses(event.message).length === 0 ? [event.message] : [])).at(-1) ?? ({ role: 'assistant', content: [] } as Message));

/**
 * Turns before the question about turn 1: 64 compact the conversation seven times (at turns
 * 14, 22, 28, 38, 46, 54 and 63), so the fact outlives summaries of summaries; the benchmark
 * (bench/small-window.ts) has the 120-turn conversation, thirteen compactions.
 */
const TURNS = 64;

describe('a conversation in an 8,000-token window', () => {
  // Sixty-five turns through the real SDK and server: on a loaded machine more than the default 20 s.
  it(`answers all ${TURNS} turns of notes, pastes, long answers and tool calls, never over the window, and still knows turn 1`, { timeout: 60_000 }, async () => {
    const { app, fake } = await smallWindowApp(8_000);
    const engine = app.engine('console:local');
    const estimates: Array<{ estimated: number; reported: number }> = [];
    let compactions = 0;
    for (let turn = 1; turn <= TURNS + 1; turn += 1) {
      const text = personMessage(turn, turn === TURNS + 1);
      const before = fake.requests.length;
      const events = await say(engine, text);
      expect(events.filter((event) => event.type === 'error'), `turn ${turn}`).toEqual([]);
      expect(answerOf(events), `turn ${turn}`).not.toBe('');
      compactions += events.filter((event) => event.type === 'compaction').length;
      for (const event of events) if (event.type === 'usage' && event.estimated) estimates.push({ estimated: event.estimated, reported: event.usage.inputTokens });
      // Every request of this turn: the newest message whole, every tool call with its result.
      for (const request of fake.requests.slice(before).filter((r) => r.path === '/v1/chat/completions' && !isSummaryRequest(r.body))) {
        expect(carriesWhole(request.body, text), `turn ${turn}`).toBe(true);
        expect(unansweredCalls(request.body), `turn ${turn}`).toEqual([]);
      }
      if (turn === TURNS + 1) expect(answerOf(events)).toContain(FACT_ANSWER);
    }
    // No request went over the window (the server would have refused it), not even once.
    expect(fake.refused).toEqual([]);
    for (const request of fake.requests.filter((r) => r.path === '/v1/chat/completions')) {
      expect(promptTokens(request.body) + (request.body.max_tokens ?? 0)).toBeLessThanOrEqual(8_000);
    }
    expect(compactions).toBeGreaterThan(5);
    // issue 20: hob's count of each prompt stays within 5% of the server's once it has seen two
    // of its counts (before, with nothing learnt of this server, it errs high, on the safe side).
    const errors = estimates.map(({ estimated, reported }) => (estimated - reported) / reported);
    expect(errors.slice(0, 2).every((error) => error > -0.01)).toBe(true);
    expect(Math.max(...errors.slice(2).map(Math.abs))).toBeLessThan(0.05);
    expect(FACT).toContain(FACT_ANSWER);
  });

  it('answers a message too big for the window with one sentence, keeps it in the workspace, and answers the next one', async () => {
    const { app, fake, workspace } = await smallWindowApp(8_000);
    const engine = app.engine('console:local');
    await say(engine, personMessage(1));
    const huge = `Turn 2: the whole export:\n${'row;value;comment about the row\n'.repeat(1_500)}`;
    const events = await say(engine, huge);
    const sentence = answerOf(events);
    expect(sentence).toMatch(/^Your message is about [\d,]+ tokens, more than this model can read at once: its window is 8,000 tokens/);
    const saved = /as (inbox\/\d+-message\.txt)/.exec(sentence)?.[1] as string;
    expect(readFileSync(join(workspace, saved), 'utf8')).toBe(huge);
    expect(events.filter((event) => event.type === 'error')).toEqual([]);
    expect(fake.refused).toEqual([]);

    const next = await say(engine, 'Turn 3: a short note about the week, nothing to do.');
    expect(answerOf(next)).toBe('Noted for turn 3.');
    expect(existsSync(join(workspace, saved))).toBe(true);
    expect(fake.refused).toEqual([]);
  });
});
