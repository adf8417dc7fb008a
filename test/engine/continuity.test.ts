import { join } from 'node:path';
// cl100k_base: a real tokenizer at half the import cost of the default (o200k_base), counts within a few percent.
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { systemClock } from '../../src/core/clock.js';
import { messageText, type Message } from '../../src/core/messages.js';
import { QueryEngine, STOPPED_NOTE } from '../../src/engine/query-engine.js';
import { COMPACTED_MARK } from '../../src/engine/compaction/levels.js';
import { TokenCalibrations } from '../../src/engine/compaction/calibration.js';
import { PromptSizer } from '../../src/engine/compaction/prompt-sizer.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { SqliteConversations } from '../../src/store/sqlite/conversations.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { defineTool } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect, ofType } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';

const options = (signal = new AbortController().signal) => ({ userId: 'u1', interaction: answering(), signal });
/** What a provider would count: the request as it goes over the wire. */
const wireTokens = (request: ProviderRequest) => countTokens(request.system) + countTokens(JSON.stringify(request.messages)) + countTokens(JSON.stringify(request.tools));

/** Writes one step's file; its output is long and does not shrink by head-and-tail (distinct words). */
const writeStep = defineTool({
  name: 'write_step',
  description: 'write one step',
  input: z.object({ path: z.string() }),
  readOnly: true,
  run: async ({ path }) => `wrote ${path}; log: ${Array.from({ length: 220 }, (_, i) => `w${i}`).join(' ')}`,
});

/** A model that does the next step it can see as done in its prompt, from wherever it reads it. */
function stepper(total: number) {
  const model = new ScriptedModel();
  model.countInput = wireTokens;
  const next = (request: ProviderRequest) => {
    const done = [...JSON.stringify(request.messages).matchAll(/steps\/(\d+)\.txt/g)].map((m) => Number(m[1]));
    const last = done.length ? Math.max(...done) : 0;
    return last >= total ? { text: `All ${total} steps are done.` } : { toolCalls: [{ name: 'write_step', input: { path: `steps/${last + 1}.txt` } }] };
  };
  for (let i = 0; i <= total + 2; i += 1) model.push(next);
  return model;
}

describe('long conversations: compaction inside the engine', () => {
  it('a multi-step task compacted mid-way goes on with the next step, not from the start', async () => {
    const model = stepper(8);
    const deps = { ...engineDeps(model, [writeStep]), contextWindow: 4_400, compactionBufferTokens: 400, maxTurns: 20 };
    const engine = new QueryEngine('console:ann', deps);
    const events = await collect(engine.submit('Write steps 1 to 8, one file each, in order.', options()));

    const compactions = ofType(events, 'compaction');
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]?.level).toBeGreaterThanOrEqual(3);
    const written = ofType(events, 'tool_started').map((e) => (e.input as { path: string }).path);
    expect(written).toEqual(Array.from({ length: 8 }, (_, i) => `steps/${i + 1}.txt`));
    expect(ofType(events, 'done').at(-1)).toMatchObject({ reason: 'end_turn' });

    // What the model read right after compacting: the summary with the carried state, not the old calls.
    const after = model.requests.find((r) => messageText(r.messages[0] as Message).startsWith(COMPACTED_MARK)) as ProviderRequest;
    const first = messageText(after.messages[0] as Message);
    expect(first).toContain('<carried-state>');
    expect(first).toContain("Task in progress (the person's latest request): Write steps 1 to 8");
    expect(first).toContain('write_step steps/1.txt → ok');
    expect(JSON.stringify(after.messages)).not.toContain('"id":"toolu_1"');
    // Every request stayed inside the window.
    for (const request of model.requests) expect(wireTokens(request)).toBeLessThan(4_400);

    // The record is complete: every original row, plus boundary rows; a new engine starts from the boundary.
    const rows = deps.db.prepare('SELECT COUNT(*) n FROM messages').get() as { n: number };
    expect(rows.n).toBe(1 + 8 * 2 + 1);
    expect((deps.db.prepare('SELECT COUNT(*) n FROM compactions').get() as { n: number }).n).toBe(compactions.length);
    const resumed = new QueryEngine('console:ann', deps);
    expect(messageText(resumed.messages[0] as Message)).toMatch(/^\[Earlier conversation compacted/);
    expect(resumed.metadata.snapshot.recentFiles.at(-1)).toBe('steps/8.txt');
  });

  it('compacts reactively once when the model says the prompt is too long, and goes on', async () => {
    const { PromptTooLongError } = await import('../../src/core/errors.js');
    const model = new ScriptedModel([{ text: 'first' }, { text: 'second' }, { error: new PromptTooLongError('prompt is too long') }, { text: 'fits now' }]);
    const deps = engineDeps(model);
    const engine = new QueryEngine('k', deps);
    await collect(engine.submit(`one ${'a '.repeat(3000)}`, options()));
    await collect(engine.submit(`two ${'b '.repeat(3000)}`, options()));
    const events = await collect(engine.submit('three', options()));
    expect(ofType(events, 'compaction')).toHaveLength(1);
    expect(messageText(events.filter((e) => e.type === 'assistant_message').map((e) => e.message).at(-1) as Message)).toBe('fits now');
    expect(JSON.stringify(model.requests[3]?.messages).length).toBeLessThan(JSON.stringify(model.requests[2]?.messages).length);
  });

  it('estimates the next prompt within 5% of what the provider then reports, without a tokenizer', async () => {
    const model = stepper(6);
    const deps = { ...engineDeps(model, [writeStep]), maxTurns: 20 };
    await collect(new QueryEngine('k', deps).submit('Write steps 1 to 6.', options()));
    const calibrations = new TokenCalibrations();
    const sizer = new PromptSizer((name) => calibrations.for(name));
    const tools = deps.tools.specs();
    for (let i = 1; i < model.requests.length; i += 1) {
      const previous = model.requests[i - 1] as ProviderRequest;
      const request = model.requests[i] as ProviderRequest;
      sizer.observe('m', wireTokens(previous), { system: previous.system, tools, messages: previous.messages });
      // The sizer compares by identity: hand it the same prefix objects.
      const messages = [...previous.messages, ...request.messages.slice(previous.messages.length)];
      const estimate = sizer.size('m', { system: request.system, tools, messages });
      const reported = wireTokens(request);
      expect(Math.abs(estimate - reported) / reported).toBeLessThan(0.05);
    }
  });
});

describe('a run the person stopped is closed in the history', () => {
  it('keeps what was written, notes the stop, and the next message is a new turn (also after a restart)', async () => {
    const model = new ScriptedModel([{ hang: true, text: 'Here is the first part of the essay' }, { text: '4' }, { text: 'still 4' }]);
    const deps = engineDeps(model);
    const controller = new AbortController();
    const engine = new QueryEngine('k', deps);
    const run = collect(engine.submit('Write a very long essay', options(controller.signal)));
    await new Promise<void>((resolve) => {
      const poll = () => (model.requests.length ? resolve() : setImmediate(poll));
      poll();
    });
    controller.abort();
    await run;
    await collect(engine.submit('What is 2+2?', options()));
    const seen = model.requests[1]?.messages.map((m) => `${m.role}: ${messageText(m)}`);
    expect(seen).toEqual(['user: Write a very long essay', `assistant: Here is the first part of the essay\n\n${STOPPED_NOTE}`, 'user: What is 2+2?']);

    // After a restart: the same closed history.
    const reopened = { ...deps, conversations: new SqliteConversations(openDatabase(join(deps.dir, 'hob.db')), systemClock) };
    await collect(new QueryEngine('k', reopened).submit('And 3+3?', options()));
    expect(model.requests[2]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(messageText(model.requests[2]?.messages[1] as Message)).toContain(STOPPED_NOTE);
  });

  it('closes a run stopped during a tool call: the call is answered as cancelled, then the note', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 's',
      input: z.object({}),
      readOnly: true,
      run: (_input, ctx) =>
        new Promise((resolve) => {
          if (ctx.signal.aborted) return resolve('cancelled');
          ctx.signal.addEventListener('abort', () => resolve('cancelled'), { once: true });
        }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'slow', input: {} }] }, { text: 'ok' }]);
    const deps = engineDeps(model, [slow]);
    const engine = new QueryEngine('k', deps);
    const controller = new AbortController();
    const events: string[] = [];
    const run = (async () => {
      for await (const event of engine.submit('run the slow thing', options(controller.signal))) {
        events.push(event.type);
        if (event.type === 'tool_started') controller.abort();
      }
    })();
    await run;
    await collect(engine.submit('never mind, hi', options()));
    const roles = model.requests[1]?.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(messageText(model.requests[1]?.messages[3] as Message)).toBe(STOPPED_NOTE);
    expect(messageText(model.requests[1]?.messages[4] as Message)).toBe('never mind, hi');
  });
});
