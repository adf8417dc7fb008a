/**
 * The conversation of issue 17, as a new user on a local server has it: short notes, pasted
 * logs (~600 tokens), long answers (~750 tokens) and a tool call every few turns, a fact told
 * in turn 1 and asked for at the end. `personMessage(turn)` is what the person sends;
 * `scriptedAnswer(body)` is the model behind the OpenAI fake, answering from what it is sent
 * (in the Chat Completions wire format), summaries included.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { SUMMARY_SYSTEM } from '../../src/engine/compaction/compactor.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions, type OpenAIRequestBody, type OpenAIScript } from '../fakes/openai.js';
import { tempDir } from './engine.js';

export const FACT = 'my locker code is 4711';
export const FACT_ANSWER = '4711';

const LOG_LINE = (n: number) => `2026-12-01T10:${String(n % 60).padStart(2, '0')}:07Z worker-${n % 7} job ${1000 + n} finished in ${(n * 37) % 900} ms, queue depth ${n % 13}\n`;
/** About 600 tokens as the fake counts them (characters / 4). */
const paste = (turn: number) => Array.from({ length: 26 }, (_, i) => LOG_LINE(turn * 31 + i)).join('');
/** About 750 tokens. */
const longAnswer = (turn: number) =>
  `Here are the deployment steps for turn ${turn}. ` +
  Array.from({ length: 22 }, (_, i) => `Step ${i + 1}: check the service, drain its traffic, roll the new build out, watch the error rate for five minutes. `).join('');

/** What the person sends in `turn` (1-based); `final` asks for the fact from turn 1. */
export function personMessage(turn: number, final = false): string {
  if (final) return `Turn ${turn}: what was my locker code again?`;
  if (turn === 1) return `Turn 1: a note to keep — ${FACT}.`;
  if (turn % 4 === 2) return `Turn ${turn}: here is the build log, keep an eye on it:\n${paste(turn)}`;
  if (turn % 5 === 3) return `Turn ${turn}: please read notes/day-${turn % 7}.md and tell me what is in it.`;
  if (turn % 3 === 0) return `Turn ${turn}: explain the deployment steps in detail.`;
  return `Turn ${turn}: a short note about the week, nothing to do.`;
}

/** The files the conversation's read_file calls open (about 500 tokens each). */
export function writeNotes(workspace: string): void {
  mkdirSync(join(workspace, 'notes'), { recursive: true });
  for (let day = 0; day < 7; day += 1) {
    writeFileSync(join(workspace, 'notes', `day-${day}.md`), `# Day ${day}\n${Array.from({ length: 30 }, (_, i) => `- item ${i}: reviewed, status ok, owner team ${i % 4}`).join('\n')}\n`);
  }
}

type WireMessage = OpenAIRequestBody['messages'][number];

const contentText = (message: WireMessage | undefined): string =>
  typeof message?.content === 'string' ? message.content : (message?.content ?? []).map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n');

let calls = 0;

/** The model: answers each request from what it was sent. */
export function scriptedAnswer(body: OpenAIRequestBody): OpenAIScript {
  const system = body.messages[0]?.role === 'system' ? contentText(body.messages[0]) : '';
  if (system === SUMMARY_SYSTEM) {
    const people = contentText(body.messages.at(-1))
      .split('\n')
      .filter((line) => line.startsWith('PERSON:'))
      .slice(-6)
      .map((line) => `- ${line.slice(8, 120)}`);
    return { text: `<analysis>Reading it.</analysis>\n<summary>\nThe person keeps notes, pastes build logs and asks about deployments. Recent:\n${people.join('\n')}\n</summary>` };
  }
  const last = body.messages.at(-1);
  if (last?.role === 'tool') {
    const call = body.messages.flatMap((message) => message.tool_calls ?? []).find((item) => item.id === last.tool_call_id);
    if (call?.function.name === 'session_search') return { text: `From our earlier conversation: ${contentText(last)}` };
    return { text: 'I read it: a list of reviewed items, all with status ok.' };
  }
  const said = contentText(last);
  const turns = [...said.matchAll(/Turn (\d+):/g)];
  const newest = turns.at(-1);
  const turn = Number(newest?.[1] ?? 0);
  const request = newest ? said.slice(newest.index) : said;
  calls += 1;
  if (request.includes('what was my locker code')) return { toolCalls: [{ id: `call_${calls}`, name: 'session_search', input: { query: 'locker code' } }] };
  const file = /please read (notes\/day-\d\.md)/.exec(request)?.[1];
  if (file) return { toolCalls: [{ id: `call_${calls}`, name: 'read_file', input: { path: file } }] };
  if (request.includes('explain the deployment steps')) return { text: longAnswer(turn) };
  return { text: `Noted for turn ${turn}.` };
}

/** Problems of one chat request on the wire: a tool call without its result, or a result without its call. */
export function unansweredCalls(body: OpenAIRequestBody): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const message of body.messages) {
    if (message.role === 'assistant') {
      if (open.size) problems.push(`tool calls ${[...open].join(', ')} left unanswered`);
      open.clear();
      for (const call of message.tool_calls ?? []) open.add(call.id);
    } else if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id ?? '')) problems.push(`tool message ${message.tool_call_id} follows no call`);
    } else if (message.role === 'user' && open.size) {
      problems.push('a user message before every tool call was answered');
    }
  }
  return problems;
}

/** Whether the request carries `text` whole in one of its user messages. */
export function carriesWhole(body: OpenAIRequestBody, text: string): boolean {
  return body.messages.some((message) => message.role === 'user' && contentText(message).includes(text));
}

export const isSummaryRequest = (body: OpenAIRequestBody): boolean => body.messages[0]?.role === 'system' && contentText(body.messages[0]) === SUMMARY_SYSTEM;

const running: Array<{ app: App; fake: FakeOpenAI }> = [];

/**
 * hob (the whole app, through the real OpenAI SDK) on the OpenAI fake as a local server;
 * `model` is the rest of the config's model section, e.g. "name: local-model, context_window: 8000".
 * Call `stopLocalServers` after each test.
 */
export async function hobOnLocalServer(server: FakeOpenAIOptions, model: string): Promise<{ app: App; fake: FakeOpenAI; workspace: string }> {
  const fake = await startFakeOpenAI(server);
  const config = parseHobConfig(`data_dir: ${tempDir('hob-local-')}\nmodel: { provider: openai, base_url: "${fake.baseUrl}", api_key: none, retry: { max_attempts: 1 }, ${model} }\n`, { env: {} });
  const app = await createApp({ config, channel: 'a test', logDestination: 'silent' });
  running.push({ app, fake });
  writeNotes(config.tools.workspace);
  return { app, fake, workspace: config.tools.workspace };
}

export async function stopLocalServers(): Promise<void> {
  for (const { app, fake } of running.splice(0)) {
    await app.close();
    await fake.close();
  }
}
