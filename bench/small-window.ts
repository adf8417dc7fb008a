/**
 * Small windows (issue 17): the fixed prompt hob sends (system prompt with persona and memory,
 * tool definitions, skills list) at 8k, 32k and 200k windows; the 120-turn conversation of
 * notes, pastes, long answers and tool calls at 8k and 16k — turns answered, compactions,
 * requests refused, the largest request; and hob's count of each prompt against the usage
 * the server reported (median, max, and the first request after each compaction). Runs the
 * whole app through the real OpenAI SDK against the OpenAI fake in vLLM's strict mode (a
 * prompt plus max_tokens over the window is refused), which counts characters / 4.
 */
import '../test/support/env.js';
import { rmSync } from 'node:fs';
import { createApp, type App } from '../src/app.js';
import { parseHobConfig } from '../src/app/channels.js';
import type { AgentEvent } from '../src/core/events.js';
import { promptTokens } from '../test/fakes/model-servers.js';
import { startFakeOpenAI } from '../test/fakes/openai.js';
import { tempDir } from '../test/support/engine.js';
import { FACT_ANSWER, isSummaryRequest, personMessage, scriptedAnswer, writeNotes } from '../test/support/small-window.js';
import { fmt, median, runIfMain, type BenchResult } from './stats.js';

const TURNS = 120;
const interaction = { confirm: async () => 'allow_once' as const, choose: async () => '' };

async function withApp<T>(contextWindow: number, use: (app: App, fake: Awaited<ReturnType<typeof startFakeOpenAI>>, workspace: string) => Promise<T>): Promise<T> {
  const fake = await startFakeOpenAI({ server: 'vllm', contextWindow, model: { id: 'local-model' } });
  fake.respondWith((request) => scriptedAnswer(request.body));
  const dir = tempDir('hob-bench-small-');
  const config = parseHobConfig(
    `data_dir: ${dir}\nmodel: { provider: openai, name: local-model, base_url: "${fake.baseUrl}", api_key: none, context_window: ${contextWindow}, max_tokens: 1024, retry: { max_attempts: 1 } }\n`,
    { env: {} },
  );
  const app = await createApp({ config, channel: 'Telegram', logDestination: 'silent' });
  writeNotes(config.tools.workspace);
  try {
    return await use(app, fake, config.tools.workspace);
  } finally {
    await app.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first request's system prompt and tool definitions, in the server's count (characters / 4), and how many tools it carried. */
async function fixedPrompt(contextWindow: number): Promise<{ tokens: number; tools: number; system: number }> {
  return withApp(contextWindow, async (app, fake) => {
    for await (const event of app.engine('telegram:42').submit('hi', { userId: '42', interaction, signal: new AbortController().signal })) void event;
    const body = fake.requests.find((request) => request.path === '/v1/chat/completions')?.body;
    if (!body) throw new Error('no request reached the server');
    const system = body.messages.slice(0, 1);
    return { tokens: promptTokens({ messages: system, tools: body.tools }), tools: body.tools?.length ?? 0, system: promptTokens({ messages: system }) };
  });
}

type Conversation = {
  answered: number;
  compactions: number;
  levels: Map<number, number>;
  refused: number;
  largest: number;
  recalled: boolean;
  seconds: number;
  /** Every request after the first two, the first after a compaction excluded. */
  errors: number[];
  afterCompaction: number[];
  /** The first two requests, before the server's scale was learnt (signed: above 0 is over). */
  first: number[];
};

async function conversation(contextWindow: number): Promise<Conversation> {
  return withApp(contextWindow, async (app, fake) => {
    const engine = app.engine('telegram:42');
    const result: Conversation = { answered: 0, compactions: 0, levels: new Map(), refused: 0, largest: 0, recalled: false, seconds: 0, errors: [], afterCompaction: [], first: [] };
    const started = performance.now();
    for (let turn = 1; turn <= TURNS + 1; turn += 1) {
      const events: AgentEvent[] = [];
      for await (const event of engine.submit(personMessage(turn, turn > TURNS), { userId: '42', interaction, signal: new AbortController().signal })) events.push(event);
      let compactedBefore = false;
      for (const event of events) {
        if (event.type === 'compaction') {
          compactedBefore = true;
          result.compactions += 1;
          result.levels.set(event.level, (result.levels.get(event.level) ?? 0) + 1);
        }
        if (event.type === 'usage' && event.estimated) {
          const signed = (event.estimated - event.usage.inputTokens) / event.usage.inputTokens;
          if (result.first.length < 2) result.first.push(signed);
          else (compactedBefore ? result.afterCompaction : result.errors).push(Math.abs(signed));
          compactedBefore = false;
        }
      }
      const answer = events.flatMap((event) => (event.type === 'assistant_message' && !event.message.content.some((block) => block.type === 'tool_use') ? [event] : [])).at(-1);
      if (answer && !events.some((event) => event.type === 'error')) result.answered += 1;
      if (turn > TURNS) result.recalled = JSON.stringify(answer?.message ?? '').includes(FACT_ANSWER);
    }
    result.seconds = (performance.now() - started) / 1000;
    result.refused = fake.refused.length;
    for (const request of fake.requests) {
      if (request.path !== '/v1/chat/completions' || isSummaryRequest(request.body)) continue;
      result.largest = Math.max(result.largest, promptTokens(request.body) + (request.body.max_tokens ?? 0));
    }
    return result;
  });
}

const thousands = (value: number) => value.toLocaleString('en-US');
const percent = (value: number) => `${fmt(value * 100)}%`;

export async function run(): Promise<BenchResult> {
  const summary: string[] = [];
  const fixed: string[] = [];
  for (const window of [8_000, 32_000, 200_000]) {
    const prompt = await fixedPrompt(window);
    const line = `${thousands(window)}: ${thousands(prompt.tokens)} tokens (${thousands(prompt.system)} system prompt + ${prompt.tools} tool definitions), ${fmt((prompt.tokens / window) * 100)}% of the window`;
    console.log(`fixed prompt at ${line}`);
    fixed.push(`${thousands(window)} → ${thousands(prompt.tokens)}`);
  }
  summary.push(`small windows: fixed prompt (system + tools, characters / 4) at ${fixed.join(', ')} tokens`);
  for (const window of [8_000, 16_000]) {
    const result = await conversation(window);
    const levels = [...result.levels].sort((a, b) => a[0] - b[0]).map(([level, count]) => `level ${level}: ${count}`).join(', ');
    const all = [...result.errors, ...result.afterCompaction];
    console.log(
      `${thousands(window)}-token window, ${TURNS} turns + the recall question in ${fmt(result.seconds)} s: ${result.answered} of ${TURNS + 1} answered, ${result.compactions} compactions (${levels}), ${result.refused} requests refused, largest prompt + max_tokens ${thousands(result.largest)}; fact from turn 1 recalled: ${result.recalled ? 'yes' : 'NO'}`,
    );
    console.log(
      `  hob's count vs the server's (${all.length} requests after the first two): median error ${percent(median(all))}, max ${percent(Math.max(...all))}; first request after a compaction (${result.afterCompaction.length}): median ${percent(median(result.afterCompaction))}, max ${percent(Math.max(...result.afterCompaction))}; the first two requests, before anything was learnt of this server: ${result.first.map((error) => `${error >= 0 ? '+' : ''}${percent(error)}`).join(', ')}`,
    );
    summary.push(
      `small windows: ${thousands(window)} tokens, ${TURNS} turns: ${result.answered}/${TURNS + 1} answered, ${result.compactions} compactions, ${result.refused} refused, largest ${thousands(result.largest)}, recall ${result.recalled ? 'yes' : 'no'}; estimate error median ${percent(median(all))}, max ${percent(Math.max(...all))}, first after compaction max ${percent(Math.max(...result.afterCompaction))}`,
    );
  }
  return { name: 'small-window', summary };
}

runIfMain(import.meta.url, run);
