/**
 * Background tasks with several processes on one PostgreSQL database: two task managers, each
 * with its own connection, stand for two `hob start` processes. A task is run by one of them;
 * when its process dies (stops renewing its lease) the other resumes it and delivers it once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { unlinkedPeople } from '../../src/core/person.js';
import { noHooks } from '../../src/engine/ports.js';
import { QueryEngine } from '../../src/engine/query-engine.js';
import { TaskManager } from '../../src/engine/tasks/task-manager.js';
import { createLogger } from '../../src/logger.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import type { NewTask } from '../../src/store/tasks.js';
import { ToolRegistry } from '../../src/tools/tool.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { gate, tempDir } from '../support/engine.js';
import { postgresSkipReason, testDatabase } from '../support/postgres.js';

const silent = createLogger({ level: 'silent', destination: 'silent' });
/**
 * Both "processes" share this thread, and each statement holds it until it returns: on a loaded
 * machine one's statements can hold back the other's renewal (every LEASE_MS/3) by a few hundred
 * ms, and a shorter lease then ran out under a live runner.
 */
const LEASE_MS = 1000;
const ANN = { platform: 'memory', chatId: 'ann-chat' };
/** The two processes' connections, opened once for the file (a worker thread and a connection each). */
let stores: Promise<[PostgresStore, PostgresStore]> | undefined;

afterAll(async () => {
  for (const store of (await stores) ?? []) store.close();
});

/**
 * One "process": `which` of the two connections to the run's database, a model of its own and a
 * task manager. A process that dies is its manager shut down: its runs end and its lease is no
 * longer renewed; the next test's process on that connection is a new one (a new runner id).
 */
async function hobProcess(which: 0 | 1, model: ScriptedModel) {
  stores ??= testDatabase().then(({ url }) => [openPostgresStore(url, { clock: systemClock }), openPostgresStore(url, { clock: systemClock })]);
  const store = (await stores)[which];
  const workspace = tempDir('hob-task-claims-');
  const deps = { provider: model, tools: new ToolRegistry([]), permissions: gate(), hooks: noHooks, conversations: store.conversations, systemPrompt: () => 'system', costUsd: () => 0, workspace, maxTurns: 5, maxTokens: 1000, approvalTimeoutSeconds: 30 };
  const manager = new TaskManager({
    tasks: store.tasks,
    outbox: store.outbox,
    engine: (key) => new QueryEngine(key, deps),
    people: unlinkedPeople,
    clock: systemClock,
    logger: silent,
    settings: { maxRunning: 5, timeoutSeconds: 60, maxTokens: 100_000 },
    lease: { ms: LEASE_MS },
    // Another host's process cannot be checked: only its lease tells.
    isGone: () => false,
  });
  manager.start({ kick: () => undefined });
  return { store, manager, model };
}

/** Waits for `probe` to return something, checking the database every few milliseconds. */
async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const deliveredTo = (store: PostgresStore, chatId: string) =>
  store.bridge.query<{ message: string }>('SELECT message FROM outbox WHERE chat_id = $1 ORDER BY id', [chatId]).rows.map((row) => JSON.parse(row.message).text as string);

function queued(id: string, createdAt: number): NewTask {
  return { id, kind: 'task', personId: 'memory:ann', userId: 'ann', originSession: 'memory:ann', platform: 'memory', chatId: `chat-${id}`, threadId: undefined, agent: undefined, description: `job ${id}`, prompt: `do ${id}`, createdAt };
}

// The first test opens the two stores (a connection and a worker thread each): slow on a loaded machine.
describe.skipIf(postgresSkipReason)('background tasks across processes on one PostgreSQL database', { timeout: 60_000 }, () => {
  it('a task whose process died is resumed by the other once its lease runs out, and its result is delivered once', async () => {
    const a = await hobProcess(0, new ScriptedModel([{ hang: true }]));
    const b = await hobProcess(1, new ScriptedModel([{ text: 'Plan B is cheapest.' }]));
    const created = a.manager.create({ prompt: 'compare the three plans', userId: 'ann', sessionKey: 'memory:ann', chat: ANN });
    if (!('task' in created)) throw new Error(created.error);
    const id = created.task.id;
    await until(() => a.model.requests.length === 1, "a's model request");
    expect(b.store.tasks.get(id)).toMatchObject({ status: 'running', runner: a.manager.runnerId });

    // a's process dies: its run stops, its lease is no longer renewed, the row stays open.
    await a.manager.shutdown(1000);
    const done = await until(() => b.store.tasks.get(id)?.status === 'completed' && b.store.tasks.get(id), 'the takeover');
    await b.manager.idle();
    expect(done).toMatchObject({ runner: b.manager.runnerId, result: 'Plan B is cheapest.' });
    // Resumed from a's stored history: the request b made carries the prompt a's run stored.
    expect(JSON.stringify(b.model.requests[0]?.messages)).toContain('compare the three plans');
    expect(b.model.requests).toHaveLength(1);
    const sent = deliveredTo(b.store, ANN.chatId).filter((text) => text.startsWith('✅'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('Plan B is cheapest.');
    await b.manager.shutdown(1000);
  });

  it('a Stop pressed on the other process ends the task there, and the process running it stops it without a second message', async () => {
    const a = await hobProcess(0, new ScriptedModel([{ hang: true }]));
    const b = await hobProcess(1, new ScriptedModel());
    const created = a.manager.create({ prompt: 'watch the build', userId: 'ann', sessionKey: 'memory:ann', chat: { platform: 'memory', chatId: 'ann-stop' } });
    if (!('task' in created)) throw new Error(created.error);
    await until(() => a.model.requests.length === 1, "a's model request");
    expect(b.manager.stop(created.task.id, 'memory:ann')).toBe('stopped');
    // a notices at its next renewal: its run ends, and nothing more is recorded or sent.
    await a.manager.settled(created.task.id);
    expect(a.store.tasks.get(created.task.id)).toMatchObject({ status: 'stopped', runner: a.manager.runnerId });
    expect(deliveredTo(a.store, 'ann-stop')).toEqual([]);
    expect(b.model.requests).toHaveLength(0);
    await Promise.all([a.manager.shutdown(1000), b.manager.shutdown(1000)]);
  });

  it('tasks left queued are each taken by one process: a claim in progress is skipped by the other, not waited for', async () => {
    const a = await hobProcess(0, new ScriptedModel());
    const b = await hobProcess(1, new ScriptedModel());
    await Promise.all([a.manager.shutdown(0), b.manager.shutdown(0)]);
    const now = Date.now();
    for (const n of [1, 2, 3]) a.store.tasks.insert(queued(`q${n}`, now + n));
    const claim = (runner: string) => ({ runner, leaseUntil: now + 60_000 });
    const [byA, byB] = a.store.transaction(() => [a.store.tasks.claimOrphans('task', claim('a'), now, () => false), b.store.tasks.claimOrphans('task', claim('b'), now, () => false)]);
    expect(byA.map((row) => row.id)).toEqual(['q1', 'q2', 'q3']);
    expect(byB).toEqual([]);
    // Once a's claim is committed, b finds them held by a live runner.
    expect(b.store.tasks.claimOrphans('task', claim('b'), now, () => false)).toEqual([]);
    expect(b.store.tasks.open('task').map((row) => row.runner)).toEqual(['a', 'a', 'a']);
  });
});
