import '../support/env.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { defineTool } from '../../src/tools/tool.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { answering, collect } from '../support/engine.js';
import { engineDeps } from '../support/deps.js';

const echo = defineTool({ name: 'echo', description: 'e', input: z.object({ text: z.string() }), readOnly: true, run: async ({ text }) => text });
const options = () => ({ userId: 'u1', interaction: answering(), signal: new AbortController().signal });

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

describe('thinking blocks', () => {
  it('are stored with their message and sent back, signature and all, when a tool loop resumes after a restart', async () => {
    fake.push({ thinking: 'I should echo first.', toolCalls: [{ id: 'toolu_echo', name: 'echo', input: { text: 'x' } }] }, { text: 'Done.' });
    const provider = () => createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-5', promptCaching: false });
    const deps = engineDeps(provider(), [echo]);
    // hob dies right after the model asked for the tool: nothing after that runs.
    const run = new QueryEngine('k', deps).submit('echo x please', options());
    for (let step = await run.next(); !step.done && step.value.type !== 'assistant_message'; step = await run.next());

    const stored = deps.db.prepare("SELECT content FROM messages WHERE role = 'assistant'").get() as { content: string };
    expect(JSON.parse(stored.content)[0]).toEqual({ type: 'thinking', thinking: 'I should echo first.', signature: 'sig_msg_fake_1' });

    // A new process: a new provider (nothing in memory) and a new engine from the store.
    const resumed = new QueryEngine('k', { ...deps, provider: provider() });
    await collect(resumed.continuePending(options()));
    expect(fake.requests[1]?.body.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'I should echo first.', signature: 'sig_msg_fake_1' },
      { type: 'tool_use', id: 'toolu_echo', name: 'echo', input: { text: 'x' } },
    ]);
  });

  it('of an earlier, finished turn are not sent again', async () => {
    fake.push({ thinking: 'easy', text: 'Hello!' }, { text: 'Bye!' });
    const deps = engineDeps(createAnthropicProvider({ apiKey: 'sk-ant-test', baseUrl: fake.baseUrl, model: 'claude-sonnet-4-5', promptCaching: false }));
    const engine = new QueryEngine('k', deps);
    await collect(engine.submit('hi', options()));
    await collect(engine.submit('bye', options()));
    expect(JSON.stringify(fake.requests[1]?.body.messages)).not.toContain('thinking');
  });
});
