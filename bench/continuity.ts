/**
 * Continuity: a scripted 1,000-turn conversation in one session with a 32,000-token window.
 * Measures that no prompt exceeds the window, that 50 facts planted in the first 100 turns
 * are still found at the end through session_search, how long each compaction takes and how
 * many tokens each level saves, and how far the prompt-size estimate is from the provider's
 * own count. The "provider" is in-process and counts every request as it would go over the
 * wire (gpt-tokenizer over the serialized system prompt, messages and tools), so hob's estimate
 * (the previous request's count + a calibrated cheap estimate of what changed; no tokenizer) is
 * measured against an independent count, not against itself. The model saves each fact it is
 * asked to remember with memory_save (as a real one would), so recall is also measured through
 * memory_search.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { z } from 'zod';
import { systemClock } from '../src/core/clock.js';
import { emptyUsage, messageText, type Message } from '../src/core/messages.js';
import { unlinkedPeople } from '../src/core/person.js';
import { noHooks } from '../src/engine/ports.js';
import { QueryEngine, type EngineDeps } from '../src/engine/query-engine.js';
import { Compactor, SUMMARY_SYSTEM, type CompactionLevel } from '../src/engine/compaction/compactor.js';
import { TokenCalibrations } from '../src/engine/compaction/calibration.js';
import { PromptSizer } from '../src/engine/compaction/prompt-sizer.js';
import { createLogger } from '../src/logger.js';
import { Memory } from '../src/memory/memory.js';
import { sessionSearchTool } from '../src/memory/session-search.js';
import { memoryTools } from '../src/memory/tools.js';
import type { ProviderClient, ProviderEvent, ProviderRequest } from '../src/providers/types.js';
import { SqliteConversations } from '../src/store/sqlite/conversations.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { SqliteSessionArchive } from '../src/store/sqlite/session-archive.js';
import { defineTool, ToolRegistry, type AnyTool } from '../src/tools/tool.js';
import { tempDir } from '../test/support/engine.js';
import { fmt, median, percentile, runIfMain, type BenchResult } from './stats.js';

const TURNS = 1_000;
const WINDOW = 32_000;
const MAX_TOKENS = 4_096;
const FACTS = 50;
const FACT_TURNS = 100;
/** A window so small that the outline is not enough and the model's summary (level 4) is measured. */
const FORCED_WINDOW = 2_600;

const NAMES = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper'];
const factValue = (n: number) => `${NAMES[n % NAMES.length]}-${1000 + n * 37}`;
const factTurn = (n: number) => 1 + n * 2;
const FILLER = 'We talked about the week, the weather, the build pipeline and what to cook tonight. ';

/** What the provider would count: the request as serialized on the wire. */
const wireTokens = (request: ProviderRequest) => countTokens(request.system) + countTokens(JSON.stringify(request.messages)) + countTokens(JSON.stringify(request.tools));

/** The scripted model: answers by turn, saves what it is asked to remember, reads a big file every 7th turn, summarizes when asked. */
class ContinuityModel implements ProviderClient {
  readonly provider = 'scripted';
  readonly model = 'bench-model';
  private readonly calibrations = new TokenCalibrations();
  readonly sizer = new PromptSizer((model) => this.calibrations.for(model));
  readonly errors: number[] = [];
  /** Errors of the first request after each compaction (its history is no longer the one counted). */
  readonly afterCompaction: number[] = [];
  /** Error of the very first request, before any count was seen. */
  first = 0;
  private previous: readonly Message[] = [];
  maxPrompt = 0;
  requests = 0;
  summaries = 0;
  private nextId = 1;
  private readonly tools: ToolRegistry;
  constructor(tools: ToolRegistry) {
    this.tools = tools;
  }

  async *stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
    this.requests += 1;
    const actual = wireTokens(request);
    if (request.system === SUMMARY_SYSTEM) {
      this.summaries += 1;
      const transcript = messageText(request.messages[0] as Message);
      const kept = transcript.split('\n').filter((line) => line.startsWith('PERSON:')).slice(-12).map((line) => `- ${line.slice(8, 160)}`);
      yield this.done(`<analysis>Reading the transcript.</analysis>\n<summary>\nThe person chatted about many things. Recent requests:\n${kept.join('\n')}\n</summary>`, actual);
      return;
    }
    const estimate = this.sizer.size(this.model, { system: request.system, tools: request.tools, messages: request.messages });
    const error = Math.abs(estimate - actual) / actual;
    if (this.previous.length === 0) this.first = error;
    else if (this.previous.every((message, i) => request.messages[i] === message)) this.errors.push(error);
    else this.afterCompaction.push(error);
    this.previous = request.messages;
    this.sizer.observe(this.model, actual, { system: request.system, tools: request.tools, messages: request.messages });
    this.maxPrompt = Math.max(this.maxPrompt, actual + MAX_TOKENS);
    const last = request.messages.at(-1) as Message;
    const turn = Number(/Turn (\d+):/.exec(messageText(last))?.[1] ?? 0);
    const remember = /remember this — (.+)$/.exec(messageText(last))?.[1];
    if (remember && !last.content.some((block) => block.type === 'tool_result')) {
      const message: Message = { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${this.nextId++}`, name: 'memory_save', input: { content: remember } }] };
      yield { type: 'done', message, stopReason: 'tool_use', usage: { ...emptyUsage(), inputTokens: actual, outputTokens: 20 }, model: this.model };
      return;
    }
    if (last.content.some((block) => block.type === 'tool_result') || turn % 7 !== 3) {
      yield this.done(`Noted for turn ${turn}. ${'Here is a thoughtful answer with a few details. '.repeat(6)}`, actual);
      return;
    }
    const id = `toolu_${this.nextId++}`;
    const message: Message = { role: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: { path: `notes/day-${turn}.md` } }] };
    yield { type: 'done', message, stopReason: 'tool_use', usage: { ...emptyUsage(), inputTokens: actual, outputTokens: 20 }, model: this.model };
  }

  private done(text: string, input: number): ProviderEvent {
    return { type: 'done', message: { role: 'assistant', content: [{ type: 'text', text }] }, stopReason: 'end_turn', usage: { ...emptyUsage(), inputTokens: input, outputTokens: countTokens(text) }, model: this.model };
  }
}

const readFile = defineTool({
  name: 'read_file',
  description: 'read a file',
  input: z.object({ path: z.string() }),
  readOnly: true,
  run: async ({ path }) => `# ${path}\n${Array.from({ length: 120 }, (_, i) => `line ${i}: entry ${i * 13} status ok, checked by the nightly job`).join('\n')}`,
});

export async function run(): Promise<BenchResult> {
  const dir = tempDir('hob-bench-continuity-');
  const store = openSqliteStore(join(dir, 'hob.db'), { clock: systemClock });
  const db = store.db;
  const memory = new Memory({ store, clock: systemClock, logger: createLogger({ level: 'silent', destination: 'silent' }), dataDir: dir, defaultTimezone: 'UTC', snapshotChars: 2000, extract: 'off' });
  try {
    const archive = new SqliteSessionArchive(db);
    const search = sessionSearchTool(archive, unlinkedPeople);
    const tools = new ToolRegistry([readFile as unknown as AnyTool, search, ...memoryTools(memory).filter((tool) => tool.name === 'memory_save' || tool.name === 'memory_search')]);
    const model = new ContinuityModel(tools);
    const deps: EngineDeps = {
      provider: model,
      tools,
      permissions: { evaluate: () => ({ behavior: 'allow', reason: 'bench' }), rememberAlways: () => undefined },
      hooks: noHooks,
      conversations: new SqliteConversations(db, systemClock),
      systemPrompt: () => 'You are hob, a personal assistant. Be concise.',
      costUsd: () => 0,
      workspace: dir,
      maxTurns: 10,
      maxTokens: MAX_TOKENS,
      approvalTimeoutSeconds: 30,
      contextWindow: WINDOW,
      people: unlinkedPeople,
    };
    const engine = new QueryEngine('bench:ann', deps);
    const compactions: Array<{ level: CompactionLevel; ms: number; saved: Array<{ level: CompactionLevel; tokens: number }> }> = [];
    let errors = 0;
    const started = performance.now();
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const fact = Array.from({ length: FACTS }, (_, n) => n).find((n) => factTurn(n) === turn);
      const text =
        fact !== undefined
          ? `Turn ${turn}: remember this — the code name of project ${fact} is ${factValue(fact)}.`
          : `Turn ${turn}: ${FILLER.repeat(1 + (turn % 3))}`;
      const before = engine.lastCompaction;
      for await (const event of engine.submit(text, { userId: 'ann', interaction: { confirm: async () => 'allow_once', choose: async () => '' }, signal: new AbortController().signal })) {
        if (event.type === 'error') errors += 1;
      }
      const after = engine.lastCompaction;
      if (after && after !== before) compactions.push({ level: after.level, ms: after.ms, saved: after.saved });
    }
    const totalSeconds = (performance.now() - started) / 1000;

    // Level 4 on the final history: a window so small that the outline is not enough (the
    // scripted summary answers at once, so this is hob's own cost, not a model's latency).
    const forced = new Compactor({ provider: () => model, hooks: noHooks, settings: () => ({ contextWindow: FORCED_WINDOW, maxTokens: 1_000, bufferTokens: 200, keepRecent: 2 }) });
    const level4Started = performance.now();
    let level4Line: string;
    try {
      const level4 = await forced.compact({ system: 'You are hob.', tools: tools.specs(), messages: engine.messages }, { trigger: 'auto', carried: engine.metadata.render(), sessionKey: 'bench:ann' });
      const ms = performance.now() - level4Started;
      level4Line = level4
        ? `forced on the final history (${FORCED_WINDOW.toLocaleString('en-US')}-token window): ${level4.saved.map((s) => `level ${s.level} −${s.tokens.toLocaleString('en-US')}`).join(', ')}; ${level4.tokensBefore.toLocaleString('en-US')} → ${level4.tokensAfter.toLocaleString('en-US')} tokens in ${fmt(ms)} ms (ended at level ${level4.level})`
        : 'forced: nothing to compact';
    } catch (error) {
      level4Line = `forced: failed (${error instanceof Error ? error.message : String(error)})`;
    }

    let found = 0;
    let remembered = 0;
    for (let n = 0; n < FACTS; n += 1) {
      const answer = String(await search.run({ query: `code name of project ${n}` }, { signal: new AbortController().signal, workspace: dir, sessionKey: 'bench:ann', userId: 'ann', interaction: { confirm: async () => 'deny', choose: async () => '' }, progress: () => undefined }));
      if (answer.includes(factValue(n))) found += 1;
      const entries = await memory.search(memory.personFor('bench:ann', 'ann'), `code name of project ${n}`, 5);
      if (entries.some((entry) => entry.content.includes(factValue(n)))) remembered += 1;
    }

    const byLevel = new Map<CompactionLevel, number[]>();
    for (const compaction of compactions) for (const saved of compaction.saved) byLevel.set(saved.level, [...(byLevel.get(saved.level) ?? []), saved.tokens]);
    const levelCounts = ([1, 2, 3, 4] as const).map((level) => `${level}: ${compactions.filter((c) => c.level === level).length}`).join(', ');
    const savedLines = ([1, 2, 3, 4] as const).map((level) => {
      const saved = byLevel.get(level) ?? [];
      return saved.length ? `level ${level}: applied ${saved.length}×, median ${fmt(median(saved))} tokens saved` : `level ${level}: not reached (the levels before freed enough)`;
    });
    const ms = compactions.map((c) => c.ms);
    const lines = [
      `${TURNS} turns in ${fmt(totalSeconds)} s (${model.requests} model requests, ${model.summaries} summary requests, ${errors} errors)`,
      `largest prompt + max_tokens: ${model.maxPrompt.toLocaleString('en-US')} of ${WINDOW.toLocaleString('en-US')} tokens (${model.maxPrompt <= WINDOW ? 'never exceeded' : 'EXCEEDED'})`,
      `compactions: ${compactions.length} (ending at level ${levelCounts}); time per compaction median ${fmt(median(ms))} ms, p95 ${fmt(percentile(ms, 0.95))} ms, max ${fmt(Math.max(...ms))} ms`,
      ...savedLines,
      level4Line,
      `recall of ${FACTS} facts from the first ${FACT_TURNS} turns via session_search: ${Math.round((found / FACTS) * 100)}%, via memory_search (saved with memory_save): ${Math.round((remembered / FACTS) * 100)}%`,
      `prompt-size estimate vs the provider's count (${model.errors.length} requests after a counted one): median error ${fmt(median(model.errors) * 100)}%, p95 ${fmt(percentile(model.errors, 0.95) * 100)}%, max ${fmt(Math.max(...model.errors) * 100)}%`,
      `  first request after each compaction (${model.afterCompaction.length}): median error ${fmt(median(model.afterCompaction) * 100)}%, max ${fmt(Math.max(...model.afterCompaction) * 100)}%; the very first request, before any count: ${fmt(model.first * 100)}%`,
    ];
    for (const line of lines) console.log(line);
    return {
      name: 'continuity',
      summary: [
        `continuity: ${TURNS} turns, ${WINDOW.toLocaleString('en-US')}-token window, largest prompt ${model.maxPrompt.toLocaleString('en-US')} (${model.maxPrompt <= WINDOW ? 'never over' : 'OVER'}); ${compactions.length} compactions, median ${fmt(median(ms))} ms; fact recall ${Math.round((found / FACTS) * 100)}% (session_search), ${Math.round((remembered / FACTS) * 100)}% (memory_search); estimate error median ${fmt(median(model.errors) * 100)}%, max ${fmt(Math.max(...model.errors) * 100)}%`,
      ],
    };
  } finally {
    memory.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, run);
