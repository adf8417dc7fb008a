import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { unlinkedPeople } from '../../src/core/person.js';
import { agentTool } from '../../src/engine/agents/agent-tool.js';
import { loadAgentDefinitions } from '../../src/engine/agents/definitions.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { TaskManager } from '../../src/engine/tasks/task-manager.js';
import { createLogger } from '../../src/logger.js';
import type { ProviderRequest } from '../../src/providers/types.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { SqliteOutbox } from '../../src/store/sqlite/outbox.js';
import { SqliteTasks } from '../../src/store/sqlite/tasks.js';
import { bashTool } from '../../src/tools/bash.js';
import type { AnyTool } from '../../src/tools/tool.js';
import { MemoryChannel, type SeenMessage } from '../fakes/memory-channel.js';
import { ScriptedModel, type ScriptedReply } from '../fakes/scripted-model.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import { migratedDbFile } from '../support/migrated-db.js';

const silent = createLogger({ level: 'silent', destination: 'silent' });
const lastUserText = (request: ProviderRequest) =>
  (request.messages.at(-1)?.content ?? []).flatMap((block) => (block.type === 'text' ? [block.text] : [])).join(' ');

let running: TestGateway | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A gateway over the memory channel whose /bg and /tasks run real background tasks on the same SQLite file. */
async function gatewayWithTasks(reply: (request: ProviderRequest) => ScriptedReply) {
  const model = new ScriptedModel();
  for (let n = 0; n < 20; n++) model.push(reply);
  const dir = tempDir('hob-gw-tasks-');
  const db = openDatabase(migratedDbFile(join(dir, 'hob.db')));
  const channel = new MemoryChannel();
  let gateway: TestGateway | undefined;
  const manager = new TaskManager({
    tasks: new SqliteTasks(db),
    outbox: new SqliteOutbox(db),
    engine: (key) => new QueryEngine(key, (gateway as TestGateway).deps),
    people: unlinkedPeople,
    clock: systemClock,
    logger: silent,
    settings: { maxRunning: 3, timeoutSeconds: 60, maxTokens: 100_000 },
  });
  gateway = await startTestGateway(channel, model, { dir, tasks: manager });
  manager.start({ kick: () => void gateway?.gateway.delivery.flush() });
  const close = gateway.close;
  running = { ...gateway, close: async () => {
    await manager.shutdown(1000);
    await close();
    db.close();
  } };
  return { channel, model, manager, gateway };
}

const texts = (channel: MemoryChannel, chatId: string) => channel.chat(chatId).map((message) => message.text);

describe('background tasks in a chat', () => {
  it('/bg answers at once, the chat stays free for the next message, and the result arrives later, once', async () => {
    let release: () => void = () => undefined;
    const finish = new Promise<void>((resolve) => (release = resolve));
    const { channel } = await gatewayWithTasks((request) =>
      lastUserText(request).includes('compare the three plans') ? { text: 'Plan B is cheapest.', pauseAt: 0, resume: finish } : { text: 'Hello Ann!' },
    );
    const chat = `dm-${OWNER.id}`;
    channel.say(OWNER, '/bg compare the three plans');
    await channel.waitFor(() => texts(channel, chat).find((text) => text.startsWith('Started background task t')), 5000, 'the /bg answer');
    channel.say(OWNER, 'hi');
    // The task is still working: the chat answers anyway.
    await channel.waitFor(() => texts(channel, chat).includes('Hello Ann!'), 5000, 'the answer to hi');
    expect(texts(channel, chat).some((text) => text.startsWith('✅ Background task'))).toBe(false);
    release();
    const done = await channel.waitFor(() => texts(channel, chat).find((text) => text.startsWith('✅ Background task')), 5000, 'the task result');
    expect(done).toMatch(/^✅ Background task t[0-9a-f]{8} \("compare the three plans"\) is done \(\d+ s\):\n\nPlan B is cheapest\.$/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(texts(channel, chat).filter((text) => text.startsWith('✅ Background task'))).toHaveLength(1);
  });

  it('/tasks lists the task with a Stop button that stops it, and someone else pressing it is told it is not theirs', async () => {
    const { channel, manager } = await gatewayWithTasks((request) => (lastUserText(request).includes('watch the logs') ? { hang: true } : { text: 'ok' }));
    const chat = `dm-${OWNER.id}`;
    channel.say(OWNER, '/bg watch the logs');
    await channel.waitFor(() => texts(channel, chat).find((text) => text.startsWith('Started')), 5000, 'the /bg answer');
    channel.say(OWNER, '/tasks');
    const list = await channel.waitFor(() => channel.chat(chat).find((message) => message.text.startsWith('Your background tasks')), 5000, 'the task list');
    expect(list.text).toMatch(/^Your background tasks:\nt[0-9a-f]{8} · running · \d+ s · watch the logs$/);
    const id = /t[0-9a-f]{8}/.exec(list.text)?.[0] as string;
    expect(list.buttons.map((button) => button.label)).toEqual([`Stop ${id}`, `Show ${id}`]);

    channel.press(FRIEND, list, `Stop ${id}`);
    await channel.waitFor(() => channel.answers.find((answer) => answer.userId === FRIEND.id), 5000, "Bob's answer");
    expect(channel.answers.find((answer) => answer.userId === FRIEND.id)?.text).toBe(`No task ${id} of yours.`);
    expect(manager.get(id, `memory:${OWNER.id}`)?.status).toBe('running');

    channel.press(OWNER, list, `Stop ${id}`);
    await channel.waitFor(() => channel.answers.find((answer) => answer.userId === OWNER.id), 5000, "Ann's answer");
    const redrawn = await channel.waitFor(() => channel.chat(chat).find((message: SeenMessage) => message.id === list.id && message.text.includes('· stopped ·')), 5000, 'the redrawn list');
    expect(redrawn.buttons.map((button) => button.label)).toEqual([`Show ${id}`]);
    expect(manager.get(id, `memory:${OWNER.id}`)?.status).toBe('stopped');
    // A stop is answered on the button; no "done" message follows.
    expect(texts(channel, chat).some((text) => text.startsWith('✅ Background task'))).toBe(false);
  });
});

describe('a worker in a chat', () => {
  it('asks its approval in the chat naming the worker, bound to the person who asked: someone else pressing is refused', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'agent', input: { description: 'check disk', prompt: 'run echo checked', tools: ['bash'] } }] },
      { toolCalls: [{ name: 'bash', input: { command: 'echo checked' } }] },
      (request) => ({ text: `worker saw: ${JSON.stringify(request.messages.at(-1)?.content)}` }),
      { text: 'The worker checked.' },
    ]);
    let gateway: TestGateway | undefined;
    const dir = tempDir('hob-gw-worker-');
    const tasks = new SqliteTasks(openDatabase(migratedDbFile(join(dir, 'tasks.db'))));
    const agent = agentTool({
      profile: () => (gateway as TestGateway).deps,
      catalog: loadAgentDefinitions([]),
      tasks,
      people: unlinkedPeople,
      clock: systemClock,
      costUsd: () => 0,
      settings: { maxParallel: 2, maxTurns: 5, timeoutSeconds: 30, models: [] },
      runnerId: 'test',
      today: () => 'today',
    });
    gateway = await startTestGateway(new MemoryChannel(), model, { dir, tools: [bashTool({ defaultTimeoutSeconds: 10 }) as unknown as AnyTool, agent] });
    running = gateway;
    const channel = (gateway.gateway as unknown as { adapters: Map<string, MemoryChannel> }).adapters.get('memory') as MemoryChannel;
    const chat = `dm-${OWNER.id}`;
    channel.say(OWNER, 'check the disk');
    const prompt = await channel.waitFor(() => channel.chat(chat).find((message) => message.buttons.some((button) => button.label === 'Allow once')), 5000, 'the approval prompt');
    expect(prompt.text).toContain('🔐 **worker** (a worker) wants to run **bash**. Allow?');
    expect(prompt.text).toContain('echo checked');

    channel.press(FRIEND, prompt, 'Allow once');
    await channel.waitFor(() => channel.answers.find((answer) => answer.userId === FRIEND.id), 5000, "Bob's answer");
    expect(channel.answers.find((answer) => answer.userId === FRIEND.id)?.text).toBe('This approval is not yours: only the person who asked, or an owner, can decide.');

    channel.press(OWNER, prompt, 'Allow once');
    await channel.waitFor(() => texts(channel, chat).includes('The worker checked.'), 5000, 'the answer');
    // The worker's command ran after Ann allowed it, and its output reached the worker.
    expect(JSON.stringify(model.requests[2]?.messages)).toContain('checked');
    // Its call showed in the progress message, under its name.
    expect(texts(channel, chat).some((text) => text.includes('worker › bash: echo checked'))).toBe(true);
  });
});
