import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PromptTooLongError, ProviderError } from '../../src/core/errors.js';
import type { Message, ToolResultBlock } from '../../src/core/messages.js';
import { runQuery } from '../../src/engine/run-query.js';
import { defineTool } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, gate, ofType, queryParams } from '../support/engine.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echo text',
  input: z.object({ text: z.string() }),
  readOnly: true,
  run: async ({ text }) => `echo: ${text}`,
});

function resultsIn(request: { messages: Message[] } | undefined): ToolResultBlock[] {
  const last = request?.messages.at(-1);
  return (last?.content ?? []).filter((block): block is ToolResultBlock => block.type === 'tool_result');
}

describe('runQuery', () => {
  it('streams the answer and ends when the model replies without tools', async () => {
    const model = new ScriptedModel([{ text: 'Hi there, friend' }]);
    const events = await collect(runQuery(queryParams(model, [echo])));
    expect(ofType(events, 'text_delta').map((e) => e.text).join('')).toBe('Hi there, friend');
    expect(events.at(-1)).toEqual({ type: 'done', reason: 'end_turn', turns: 1 });
  });

  it('stops at the turn limit and says so', async () => {
    const model = new ScriptedModel(Array.from({ length: 10 }, () => ({ toolCalls: [{ name: 'echo', input: { text: 'again' } }] })));
    const events = await collect(runQuery(queryParams(model, [echo], { maxTurns: 3 })));
    expect(model.requests).toHaveLength(3);
    expect(ofType(events, 'error')[0]?.message).toContain('Stopped after 3 turns');
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'max_turns' });
  });

  it('runs several read-only calls at the same time', async () => {
    let waiting = 0;
    let release: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => (release = resolve));
    const rendezvous = defineTool({
      name: 'rendezvous',
      description: 'Finishes only once two calls run at once',
      input: z.object({ n: z.number() }),
      readOnly: true,
      run: async ({ n }) => {
        waiting += 1;
        if (waiting === 2) release();
        await bothStarted;
        return `done ${n}`;
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'rendezvous', input: { n: 1 } }, { name: 'rendezvous', input: { n: 2 } }] },
      { text: 'ok' },
    ]);
    await collect(runQuery(queryParams(model, [rendezvous])));
    expect(resultsIn(model.requests[1]).map((r) => r.content)).toEqual(['done 1', 'done 2']);
  });

  it('runs calls that change things one at a time, in order', async () => {
    const log: string[] = [];
    const write = defineTool({
      name: 'write',
      description: 'Writes',
      input: z.object({ n: z.number() }),
      readOnly: false,
      run: async ({ n }) => {
        log.push(`start ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${n}`);
        return `wrote ${n}`;
      },
    });
    const model = new ScriptedModel([{ toolCalls: [1, 2, 3].map((n) => ({ name: 'write', input: { n } })) }, { text: 'ok' }]);
    await collect(runQuery(queryParams(model, [write])));
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('turns a denied call into an error result and lets the model go on', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'I could not do that.' }]);
    const permissions = gate(() => ({ behavior: 'deny', reason: 'echo is in denied_tools' }));
    const events = await collect(runQuery(queryParams(model, [echo], { permissions })));
    const [result] = resultsIn(model.requests[1]);
    expect(result).toMatchObject({ isError: true, content: 'Permission denied: echo is in denied_tools' });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'end_turn' });
  });

  it('answers unknown tools and bad input with errors the model can act on', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'nosuch', input: {} }, { name: 'echo', input: { text: 42 } }, { name: 'toString', input: {} }] },
      { text: 'ok' },
    ]);
    await collect(runQuery(queryParams(model, [echo])));
    const [unknown, bad, proto] = resultsIn(model.requests[1]);
    expect(unknown).toMatchObject({ isError: true, content: 'Unknown tool "nosuch". Available tools: echo.' });
    expect(bad?.isError).toBe(true);
    expect(bad?.content).toContain('The echo tool was called with invalid input');
    expect(bad?.content).toContain('- text:');
    expect(proto?.content).toContain('Unknown tool "toString"');
  });

  it('reports a tool that throws as an error result', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Throws',
      input: z.object({}),
      readOnly: false,
      run: async () => {
        throw new Error('disk on fire');
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'broken', input: {} }] }, { text: 'sorry' }]);
    await collect(runQuery(queryParams(model, [broken])));
    expect(resultsIn(model.requests[1])[0]).toMatchObject({ isError: true, content: 'The broken tool failed: disk on fire' });
  });

  it('answers every tool call when the person cancels mid-run', async () => {
    const controller = new AbortController();
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for abort',
      input: z.object({ n: z.number() }),
      readOnly: false,
      run: (_input, ctx) =>
        new Promise((_, reject) => {
          controller.abort();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
          if (ctx.signal.aborted) reject(new Error('aborted'));
        }),
    });
    const model = new ScriptedModel([{ toolCalls: [1, 2, 3].map((n) => ({ name: 'slow', input: { n } })) }]);
    const events = await collect(runQuery(queryParams(model, [slow], { context: { signal: controller.signal } })));
    const calls = ofType(events, 'assistant_message')[0]?.message.content.filter((b) => b.type === 'tool_use') ?? [];
    const answered = ofType(events, 'user_message')[0]?.message.content as ToolResultBlock[];
    expect(answered.map((r) => r.toolUseId)).toEqual(calls.map((c) => (c.type === 'tool_use' ? c.id : '')));
    expect(answered.every((r) => r.isError && r.content.startsWith('Cancelled'))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'aborted' });
  });

  it('asks the person and runs, refuses, or remembers according to the answer', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'echo', input: { text: 'a' } }, { name: 'echo', input: { text: 'b' } }, { name: 'echo', input: { text: 'c' } }] },
      { text: 'done' },
    ]);
    const permissions = gate(() => ({ behavior: 'ask', reason: 'needs approval' }));
    const interaction = answering('allow_once', 'deny', 'timeout');
    const events = await collect(runQuery(queryParams(model, [echo], { permissions, context: { interaction } })));
    expect(ofType(events, 'approval_requested')).toHaveLength(3);
    const [once, denied, timedOut] = resultsIn(model.requests[1]);
    expect(once).toMatchObject({ isError: false, content: 'echo: a' });
    expect(denied?.content).toContain('The person denied permission');
    expect(timedOut?.content).toContain('Nobody answered the approval request within 300 seconds');
  });

  it('stores a narrow rule when the person allows always', async () => {
    const run = defineTool({
      name: 'bash',
      description: 'shell',
      input: z.object({ command: z.string() }),
      readOnly: false,
      target: ({ command }) => ({ command }),
      run: async () => 'ran',
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'bash', input: { command: 'npm test' } }] }, { text: 'ok' }]);
    const permissions = gate(() => ({ behavior: 'ask', reason: 'bash needs approval' }));
    await collect(runQuery(queryParams(model, [run], { permissions, context: { interaction: answering('allow_always') } })));
    expect(permissions.always).toEqual([{ userId: 'u1', rule: { toolName: 'bash', command: 'npm test' } }]);
  });

  it('injects a message that arrived mid-run at the next tool boundary', async () => {
    const steering = ['also check the logs'];
    const model = new ScriptedModel([{ toolCalls: [{ name: 'echo', input: { text: 'x' } }] }, { text: 'ok' }]);
    await collect(runQuery(queryParams(model, [echo], { drainSteering: () => steering.splice(0) })));
    const last = model.requests[1]?.messages.at(-1);
    expect(last?.content.at(-1)).toEqual({ type: 'text', text: 'also check the logs' });
  });

  it('compacts and retries once when the prompt is too long', async () => {
    const model = new ScriptedModel([{ error: new PromptTooLongError('prompt is too long') }, { text: 'fits now' }]);
    const events = await collect(
      runQuery(queryParams(model, [echo], { onPromptTooLong: async (messages) => messages.slice(-1) })),
    );
    expect(ofType(events, 'text_delta').map((e) => e.text).join('')).toBe('fits now');
  });

  it('ends with a readable error when the model keeps failing', async () => {
    const model = new ScriptedModel([{ error: new ProviderError('503 Service Unavailable', { retryable: true, status: 503 }) }]);
    const events = await collect(runQuery(queryParams(model, [echo])));
    expect(ofType(events, 'error')[0]).toMatchObject({
      message: 'The model is not answering right now (it is overloaded or unreachable). Please try again in a minute.',
      detail: '503 Service Unavailable',
    });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'error' });
  });

  it('says a refused key in plain words, without config jargon, and keeps the cause as detail', async () => {
    const model = new ScriptedModel([{ error: new ProviderError('Anthropic rejected the API key (401 authentication_error). Check model.api_key in the config.', { retryable: false, status: 401 }) }]);
    const [error] = ofType(await collect(runQuery(queryParams(model, [echo]))), 'error');
    expect(error?.message).toBe("The model service refused hob's API key, so I cannot answer. The owner can find the details in hob's log.");
    expect(error?.message).not.toContain('model.api_key');
    expect(error?.detail).toContain('Check model.api_key');
  });
});
