import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { messageText } from '../../src/core/messages.js';
import { SHUTDOWN_REASON } from '../../src/core/shutdown.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { SqliteConversations } from '../../src/store/sqlite/conversations.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { systemClock } from '../../src/core/clock.js';
import { defineTool } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';
import { join } from 'node:path';

const options = () => ({ userId: 'u1', interaction: answering(), signal: new AbortController().signal });
const echo = defineTool({ name: 'echo', description: 'e', input: z.object({ text: z.string() }), readOnly: true, run: async ({ text }) => text });

describe('QueryEngine', () => {
  it('keeps the history across a restart, so the model sees earlier messages', async () => {
    const model = new ScriptedModel([{ text: 'Nice to meet you, Ann.' }, { text: 'You are Ann.' }]);
    const deps = engineDeps(model);
    await collect(new QueryEngine('console:local', deps).submit('My name is Ann', options()));
    deps.db.close();

    const reopened = { ...deps, conversations: new SqliteConversations(openDatabase(join(deps.dir, 'hob.db')), systemClock) };
    const engine = new QueryEngine('console:local', reopened);
    await collect(engine.submit('What is my name?', options()));
    const seen = model.requests[1]?.messages.map((m) => `${m.role}: ${messageText(m)}`);
    expect(seen).toEqual(['user: My name is Ann', 'assistant: Nice to meet you, Ann.', 'user: What is my name?']);
  });

  it('adds up tokens and cost and keeps them after a restart', async () => {
    const deps = engineDeps(new ScriptedModel([{ text: 'a' }, { text: 'b' }]));
    const engine = new QueryEngine('k', deps);
    await collect(engine.submit('one', options()));
    await collect(engine.submit('two', options()));
    expect(engine.status()).toMatchObject({ requests: 2, usage: { inputTokens: 20, outputTokens: 10 }, costUsd: 0.02 });
    expect(new QueryEngine('k', deps).status()).toMatchObject({ requests: 2, costUsd: 0.02 });
  });

  it('starts a fresh conversation on reset and the model no longer sees the old one', async () => {
    const model = new ScriptedModel([{ text: 'a' }, { text: 'b' }]);
    const deps = engineDeps(model);
    const engine = new QueryEngine('k', deps);
    await collect(engine.submit('secret', options()));
    const before = engine.status().sessionId;
    engine.reset();
    await collect(engine.submit('fresh', options()));
    expect(model.requests[1]?.messages.map(messageText)).toEqual(['fresh']);
    expect(engine.status().sessionId).not.toBe(before);
    expect(new QueryEngine('k', deps).messages.map(messageText)).toEqual(['fresh', 'b']);
  });

  it('continues a tool loop that was cut off, telling the model the call may not have finished', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'echo', input: { text: 'x' }, id: 'call_1' }] }]);
    const deps = engineDeps(model, [echo]);
    const engine = new QueryEngine('k', deps);
    // Simulate a crash right after the assistant asked for a tool: stop consuming the run
    // there, without closing the generator (a crash runs no cleanup).
    const run = engine.submit('do it', options());
    for (let step = await run.next(); !step.done && step.value.type !== 'assistant_message'; step = await run.next());

    const resumedModel = new ScriptedModel([{ text: 'Picking up where we left off.' }]);
    const resumed = new QueryEngine('k', { ...deps, provider: resumedModel });
    expect(resumed.hasPendingWork()).toBe(true);
    const events = await collect(resumed.continuePending(options()));
    const answered = resumedModel.requests[0]?.messages.at(-1)?.content[0];
    expect(answered).toMatchObject({ type: 'tool_result', toolUseId: 'call_1', isError: true });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'end_turn' });
    expect(resumed.hasPendingWork()).toBe(false);
  });

  it('answers a message whose run was stopped by a shutdown, at the next start', async () => {
    const model = new ScriptedModel([{ hang: true }]);
    const deps = engineDeps(model);
    const controller = new AbortController();
    const run = collect(new QueryEngine('k', deps).submit('are you there?', { ...options(), signal: controller.signal }));
    controller.abort(SHUTDOWN_REASON);
    await run;
    const next = new ScriptedModel([{ text: 'Yes.' }]);
    const resumed = new QueryEngine('k', { ...deps, provider: next });
    expect(resumed.hasPendingWork()).toBe(true);
    await collect(resumed.continuePending(options()));
    expect(next.requests[0]?.messages.map(messageText)).toEqual(['are you there?']);
  });

  it('does not start again by itself a run the person stopped, or one that hit the turn limit', async () => {
    const stopped = engineDeps(new ScriptedModel([{ hang: true }]));
    const controller = new AbortController();
    const run = collect(new QueryEngine('k', stopped).submit('long job', { ...options(), signal: controller.signal }));
    controller.abort(); // /stop or Ctrl-C
    await run;
    const afterStop = new QueryEngine('k', stopped);
    expect(afterStop.hasPendingWork()).toBe(false);
    expect(await collect(afterStop.continuePending(options()))).toEqual([]);

    const looping = new ScriptedModel([{ toolCalls: [{ name: 'echo', input: { text: 'again' } }] }, { toolCalls: [{ name: 'echo', input: { text: 'again' } }] }]);
    const limited = { ...engineDeps(looping, [echo]), maxTurns: 2 };
    const events = await collect(new QueryEngine('k', limited).submit('loop', options()));
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'max_turns' });
    expect(new QueryEngine('k', limited).hasPendingWork()).toBe(false);
  });
});
