import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { messageText } from '../../src/core/messages.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { defineTool } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { answering, collect } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';

const options = () => ({ userId: 'u1', interaction: answering(), signal: new AbortController().signal });

describe('a run keeps to the session it started in', () => {
  it('/new during a tool call: the answer, its usage and its working memory land in the old session, and the new one starts clean', async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const read = defineTool({
      name: 'read_file',
      description: 'r',
      input: z.object({ path: z.string() }),
      readOnly: true,
      run: async () => {
        started();
        await released;
        return 'contents';
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'read_file', input: { path: 'old-plan.md' } }] }, { text: 'The old plan says hi.' }, { text: 'Fresh start.' }]);
    const deps = engineDeps(model, [read]);
    const engine = new QueryEngine('k', deps);
    const run = collect(engine.submit('Read the old plan', options()));
    await running;
    const oldSession = engine.status().sessionId;
    engine.reset();
    release();
    await run;

    expect(engine.status()).toMatchObject({ messages: 0, requests: 0, costUsd: 0 });
    expect(engine.metadata.isEmpty).toBe(true);
    await collect(engine.submit('new topic', options()));
    expect(model.requests[2]?.messages.map(messageText)).toEqual(['new topic']);

    const back = new QueryEngine('k', deps);
    expect(back.resume(oldSession, 'u1')).toBe(true);
    expect(back.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(messageText(back.messages.at(-1) ?? { role: 'assistant', content: [] })).toBe('The old plan says hi.');
    expect(back.status()).toMatchObject({ requests: 2 });
    expect(back.metadata.snapshot.recentFiles).toEqual(['old-plan.md']);
    expect(back.hasPendingWork()).toBe(false);
  });
});
