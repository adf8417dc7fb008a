import '../support/env.js';
import { afterEach, describe, expect, it } from 'vitest';
import { messageText, toolUses } from '../../src/core/messages.js';
import { promptTokens } from '../fakes/model-servers.js';
import type { OpenAIRequestBody, OpenAIScript } from '../fakes/openai.js';
import { answering, collect } from '../support/engine.js';
import { hobOnLocalServer, isSummaryRequest, stopLocalServers, unansweredCalls } from '../support/small-window.js';

/**
 * issue 17: Ollama's default 4,096-token window (most GPUs), found by asking the server, with
 * the lean prompt: the fixed part leaves at least half the window, rarely used tools are
 * loaded through tool_search when the model needs one, and a conversation with tool calls works.
 */

afterEach(stopLocalServers);

const last = (body: OpenAIRequestBody) => body.messages.at(-1);
const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

/** A model that finds files with glob (loading it first), reads one, and answers. */
function model(body: OpenAIRequestBody): OpenAIScript {
  if (isSummaryRequest(body)) return { text: '<summary>The person looked at their notes.</summary>' };
  const tools = new Set((body.tools ?? []).map((tool) => tool.function.name));
  const message = last(body);
  if (message?.role === 'tool') {
    const content = text(message.content);
    if (content.startsWith('Loaded: glob')) return { toolCalls: [{ id: `g${body.messages.length}`, name: 'glob', input: { pattern: 'notes/*.md' } }] };
    if (content.includes('notes/day-0.md') && !content.includes('# Day')) return { toolCalls: [{ id: `r${body.messages.length}`, name: 'read_file', input: { path: 'notes/day-0.md' } }] };
    return { text: `Done: ${content.slice(0, 60).replace(/\s+/g, ' ')}` };
  }
  const said = text(message?.content);
  if (said.includes('find my notes')) {
    return tools.has('glob') ? { toolCalls: [{ id: `g${body.messages.length}`, name: 'glob', input: { pattern: 'notes/*.md' } }] } : { toolCalls: [{ id: `s${body.messages.length}`, name: 'tool_search', input: { query: 'select:glob' } }] };
  }
  if (said.includes('read day')) return { toolCalls: [{ id: `r${body.messages.length}`, name: 'read_file', input: { path: `notes/day-${/read day (\d)/.exec(said)?.[1] ?? 0}.md` } }] };
  return { text: 'Noted.' };
}

describe('a 4,096-token window (Ollama on most GPUs)', () => {
  it('is found by asking Ollama, gets the lean prompt (at most half the window), loads a deferred tool on request, and a conversation with tool calls works', async () => {
    // A new user's config: no context_window, the default max_tokens of 8,192.
    const { app, fake } = await hobOnLocalServer({ server: 'ollama', contextWindow: 4_096, model: { id: 'llama3.1', modelMax: 131_072 } }, 'name: llama3.1');
    fake.respondWith((request) => model(request.body));
    const engine = app.engine('console:local');
    const say = async (message: string) => {
      const events = await collect(engine.submit(message, { userId: 'local', interaction: answering('allow_once', 'allow_once', 'allow_once'), signal: new AbortController().signal }));
      expect(events.filter((event) => event.type === 'error'), message).toEqual([]);
      const answer = events.flatMap((event) => (event.type === 'assistant_message' && toolUses(event.message).length === 0 ? [event.message] : [])).at(-1);
      return answer ? messageText(answer) : '';
    };

    expect(await say('Please find my notes and read the first one.')).toMatch(/^Done: .*# Day 0/);
    const chats = () => fake.requests.filter((request) => request.path === '/v1/chat/completions' && !isSummaryRequest(request.body));
    const [first, afterSearch] = chats();
    // The fixed part of the prompt (system prompt and tool definitions) leaves at least half the window.
    const fixed = promptTokens({ messages: first?.body.messages.slice(0, 1), tools: first?.body.tools });
    expect(fixed).toBeLessThanOrEqual(2_048);
    const names = (request: typeof first) => (request?.body.tools ?? []).map((tool) => tool.function.name);
    expect(names(first)).not.toContain('glob');
    expect(names(first)).toContain('read_file');
    expect(first?.body.tools?.find((tool) => tool.function.name === 'tool_search')?.function.description).toContain('glob');
    expect(names(afterSearch)).toContain('glob');

    for (let turn = 0; turn < 14; turn += 1) {
      expect(await say(turn % 2 ? `Now read day ${turn % 7} please.` : `A note for the record, number ${turn}: ${'the garden needs water, '.repeat(20)}`)).not.toBe('');
    }
    // The window was asked once; no request was cut by Ollama (which would drop hob's instructions), none over the window.
    expect(fake.requests.filter((request) => request.path === '/api/ps')).toHaveLength(1);
    expect(fake.truncated).toEqual([]);
    for (const request of chats()) {
      expect(unansweredCalls(request.body)).toEqual([]);
      expect(promptTokens(request.body) + (request.body.max_tokens ?? 0)).toBeLessThanOrEqual(4_096);
      // max_tokens is what the window leaves, not the 8,192 configured.
      expect(request.body.max_tokens).toBeLessThan(4_096 - 1_024);
    }
  });
});
