import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/core/events.js';
import { promptTokens } from '../fakes/model-servers.js';
import type { FakeOpenAI } from '../fakes/openai.js';
import { answering, collect } from '../support/engine.js';
import { hobOnLocalServer, isSummaryRequest, stopLocalServers } from '../support/small-window.js';

/**
 * issue 17: when the server refuses a prompt as too long, hob believes the server's count and
 * window, compacts below them and sends again — also in a turn where it had just compacted on
 * its own; and a model that cannot write summaries never leaves the conversation unable to answer.
 */

afterEach(stopLocalServers);
let fake: FakeOpenAI | undefined;

/** About 1,000 tokens as the server counts them (`fill` characters of it are filler, 4 to a token). */
const paste = (n: number, fill = 2_300) => `Paste ${n}:\n${Array.from({ length: 60 }, (_, i) => `entry ${n}.${i} logged ok\n`).join('')}${'x'.repeat(fill)}`;

async function start(contextWindow: number, failSummaries = false) {
  const hob = await hobOnLocalServer({ server: 'vllm', contextWindow }, `name: local-model, context_window: ${contextWindow}, max_tokens: 1024`);
  fake = hob.fake;
  fake.respondWith((request) => (isSummaryRequest(request.body) ? (failSummaries ? { status: 500, message: 'model crashed' } : { text: '<summary>Pastes.</summary>' }) : { text: 'Noted.' }));
  const engine = hob.app.engine('console:local');
  return (text: string) => collect(engine.submit(text, { userId: 'local', interaction: answering(), signal: new AbortController().signal }));
}

const answered = (events: AgentEvent[]) => events.some((event) => event.type === 'assistant_message') && !events.some((event) => event.type === 'error');
const chats = () => fake?.requests.filter((request) => request.path === '/v1/chat/completions' && !isSummaryRequest(request.body)) ?? [];

describe('the server says the prompt is too long', () => {
  it('compacts below the count the server gave, right after compacting on its own, and answers; later requests fit the window the server named', async () => {
    const say = await start(8_000);
    // Sized so that each step below is clear of its threshold by 300 tokens or more, whatever the
    // system prompt's few tokens of temp-folder path: the four pastes stay under hob's threshold
    // for 8,000 (6,176); the fifth message takes the prompt over it; hob's own compaction (its
    // target 4,323) keeps the last paste and the fifth message, about 4,000 tokens, which with
    // max_tokens 1,024 is over the server's 4,500; the reactive one keeps the fifth message alone.
    // (With four equal pastes it kept about 4,300, a few tokens under its target: a longer temp
    // path made it compact one level deeper, under the server's window, and never be refused.)
    for (let n = 1; n <= 4; n += 1) expect(answered(await say(paste(n, n < 4 ? 2_700 : 1_100)))).toBe(true);
    expect(fake?.refused).toEqual([]);
    // The server is restarted with a smaller window; hob still believes 8,000.
    fake?.setContextWindow(4_500);
    const before = chats().length;
    const events = await say(`${paste(5)}\n${'y'.repeat(2_000)}`);
    expect(answered(events)).toBe(true);
    // It compacted on its own first (the prompt was over its threshold for 8,000), was refused, and compacted again.
    const kinds = events.map((event) => event.type).filter((type) => type === 'compaction' || type === 'assistant_message');
    expect(kinds.slice(0, 2)).toEqual(['compaction', 'compaction']);
    expect(fake?.refused.length).toBe(1);
    for (const request of chats().slice(before + 1)) expect(promptTokens(request.body) + (request.body.max_tokens ?? 0)).toBeLessThanOrEqual(4_500);
    for (let n = 6; n <= 10; n += 1) expect(answered(await say(paste(n)))).toBe(true);
    expect(fake?.refused.length).toBe(1);
  });
});

describe('the model cannot write summaries', () => {
  it('stops asking it after three failures, and every message is still answered', async () => {
    const say = await start(8_000, true);
    let compactions = 0;
    for (let n = 1; n <= 24; n += 1) {
      const events = await say(paste(n));
      expect(answered(events), `paste ${n}`).toBe(true);
      compactions += events.filter((event) => event.type === 'compaction').length;
    }
    expect(compactions).toBeGreaterThan(5);
    expect(fake?.requests.filter((request) => isSummaryRequest(request.body))).toHaveLength(3);
    expect(fake?.refused).toEqual([]);
  });
});
