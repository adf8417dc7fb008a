import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { ScriptedModel, type ScriptedReply } from '../fakes/scripted-model.js';
import { answering, collect, tempDir } from '../support/engine.js';

/** Workers and background tasks as hob start puts them together: the real app over a real SQLite file. */

let app: App | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function makeApp(model: ScriptedModel, dir = tempDir('hob-delegation-')): Promise<App> {
  const config = parseConfig(`data_dir: ${dir}\nmodel: { api_key: test }\ntasks: { max_running: 1 }\n`, { env: {} });
  app = await createApp({ config, channel: 'a test', provider: model, logDestination: 'silent' });
  return app;
}

const options = (userId: string) => ({ userId, interaction: answering(), signal: new AbortController().signal, chat: { platform: 'memory', chatId: `dm-${userId}` } });
const toolResult = (request: ProviderRequest | undefined) =>
  (request?.messages.at(-1)?.content ?? []).flatMap((block) => (block.type === 'tool_result' ? [block.content] : [])).join('\n');

describe('agent definitions', () => {
  it('come from hob’s agents/ folder, from plugins and from data_dir/agents, and their names and descriptions are in the system prompt', async () => {
    const dir = tempDir('hob-defs-');
    mkdirSync(join(dir, 'plugins', 'home-tools', 'agents'), { recursive: true });
    writeFileSync(join(dir, 'plugins', 'home-tools', 'plugin.json'), JSON.stringify({ name: 'home-tools', version: '1.0.0', description: 'Home helpers' }));
    writeFileSync(join(dir, 'plugins', 'home-tools', 'agents', 'plumber.md'), '---\nname: plumber\ndescription: Finds leaks in the house notes\n---\nLook for leaks.');
    mkdirSync(join(dir, 'agents'));
    writeFileSync(join(dir, 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: My own strict reviewer\n---\nBe strict.');
    writeFileSync(join(dir, 'agents', 'broken.md'), '---\nname: Broken One\ndescription: x\n---\n');
    const model = new ScriptedModel([{ text: 'hi' }]);
    const hob = await makeApp(model, dir);
    const catalog = hob.delegation.catalog;
    expect(catalog.list().map((agent) => `${agent.name} (${agent.origin})`)).toEqual(['plumber (plugin home-tools)', 'researcher (bundled)', 'reviewer (yours)']);
    expect(catalog.problems).toEqual([expect.stringContaining('broken.md: front matter field "name": expected a kebab-case name')]);
    await collect(hob.engine('memory:dm-ann').submit('hello', options('ann')));
    const system = model.requests[0]?.system ?? '';
    expect(system).toContain('- plumber: Finds leaks in the house notes');
    expect(system).toContain('- researcher: Looks something up');
    expect(system).toContain('- reviewer: My own strict reviewer');
    expect(system).toContain('<task-notification> block: hob adds it, the person did not write it');
  });
});

/** A model shared by a conversation and its tasks: each request answered by what it is (a task's first message is its prompt). */
function dispatching(answer: (said: string, request: ProviderRequest) => ScriptedReply): ScriptedModel {
  const model = new ScriptedModel();
  for (let n = 0; n < 30; n++) model.push((request) => answer(lastSaid(request), request));
  return model;
}
function lastSaid(request: ProviderRequest): string {
  const last = request.messages.at(-1)?.content ?? [];
  if (last.some((block) => block.type === 'tool_result')) return '(tool results)';
  return last.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(' ');
}
/** A task's run is headless: its system prompt says nobody can approve. */
const isTask = (request: ProviderRequest) => request.system.includes('Nobody can approve actions in this run');

describe('background tasks', () => {
  it('deliver their result to the chat once, and the conversation’s next message carries a <task-notification>, not as the person’s words', async () => {
    const model = dispatching((said, request) => {
      if (isTask(request)) return { text: 'Plan B costs least.' };
      if (said.includes('which plan')) return { toolCalls: [{ name: 'task_create', input: { prompt: 'Find the cheapest of the three plans', description: 'cheapest plan' } }] };
      if (said === '(tool results)') return { text: 'I started it and will tell you.' };
      if (said.includes('so?')) return { text: 'Plan B it is.' };
      return { text: 'Anything else?' };
    });
    const hob = await makeApp(model);
    const observed: string[] = [];
    const observe = hob.deps.observe;
    hob.deps.observe = (who, said) => {
      observed.push(said);
      observe?.(who, said);
    };
    hob.delegation.tasks.start({ kick: () => undefined });
    const engine = hob.engine('memory:dm-ann');
    await collect(engine.submit('which plan is cheapest? take your time', options('ann')));
    await hob.delegation.tasks.idle();
    const started = model.requests.find((request) => lastSaid(request) === '(tool results)');
    expect(toolResult(started)).toMatch(/^Started background task t[0-9a-f]{8} \("cheapest plan"\)/);

    const outbox = hob.store.outbox.due(Date.now() + 1000, 50);
    const results = outbox.filter((row) => row.message.includes('Plan B costs least'));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ platform: 'memory', chatId: 'dm-ann', sessionKey: 'memory:dm-ann' });

    await collect(engine.submit('so?', options('ann')));
    await collect(engine.submit('thanks', options('ann')));
    const first = model.requests.at(-2)?.messages.at(-1)?.content ?? [];
    expect(first[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^<task-notification>\n<task-id>t[0-9a-f]{8}<\/task-id>\n<status>completed<\/status>/) });
    expect(JSON.stringify(first[0])).toContain('Plan B costs least.');
    expect(first.at(-1)).toEqual({ type: 'text', text: 'so?' });
    // Once: the message after does not carry it again, and memory never heard it as Ann's words.
    expect(JSON.stringify(model.requests.at(-1)?.messages.at(-1))).not.toContain('task-notification');
    expect(observed.join('\n')).not.toContain('task-notification');
  });

  it('are another person’s business: their ids are "not found" to task_output and task_stop, and task_list leaves them out', async () => {
    let id = '';
    const model = dispatching((said, request) => {
      if (isTask(request)) return { hang: true };
      if (said.includes('watch the logs')) return { toolCalls: [{ name: 'task_create', input: { prompt: 'watch the logs' } }] };
      if (said.includes('what is running')) {
        return { toolCalls: [{ name: 'task_output', input: { task_id: id } }, { name: 'task_stop', input: { task_id: id } }, { name: 'task_list', input: {} }] };
      }
      if (said.includes('and another')) return { toolCalls: [{ name: 'task_create', input: { prompt: 'another one' } }] };
      return { text: 'ok' };
    });
    const hob = await makeApp(model);
    hob.delegation.tasks.start({ kick: () => undefined });
    await collect(hob.engine('memory:dm-ann').submit('watch the logs', options('ann')));
    id = /t[0-9a-f]{8}/.exec(toolResult(model.requests.find((request) => lastSaid(request) === '(tool results)')))?.[0] as string;
    expect(id).toMatch(/^t/);
    await collect(hob.engine('memory:dm-bob').submit('what is running?', options('bob')));
    expect(toolResult(model.requests.at(-1)).split('\n')).toEqual([`There is no task ${id} of yours. task_list shows your tasks.`, `There is no task ${id} of yours. task_list shows your tasks.`, 'No background tasks.']);
    expect(hob.delegation.tasks.get(id, 'memory:ann')?.status).toBe('running');
    // Ann's own limit (tasks.max_running: 1) holds her second task back, in words.
    await collect(hob.engine('memory:dm-ann').submit('and another', options('ann')));
    expect(toolResult(model.requests.at(-1))).toContain('You already have 1 background task running, the most at once (tasks.max_running)');
    expect(hob.delegation.tasks.stop(id, 'memory:ann')).toBe('stopping');
    await hob.delegation.tasks.idle();
    expect(hob.delegation.tasks.get(id, 'memory:ann')?.status).toBe('stopped');
  });
});
