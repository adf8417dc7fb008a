import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, unsettled, writeStartConfig, type HobProcess } from '../support/hob-process.js';

const ANN = { id: 100, first_name: 'Ann' };
const DM = { id: 100, type: 'private' as const };

let model: FakeAnthropic | undefined;
let telegram: FakeTelegram | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await telegram?.close();
  await model?.close();
});

describe('a background task across kill -9', () => {
  it('is resumed from its stored history after the restart, and its result is delivered once', async () => {
    model = await startFakeAnthropic();
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    const dir = tempDir('hob-task-kill-');
    const path = writeStartConfig(dir, { model, telegram });
    // The task's first turn looks at the workspace; its second hangs until hob is killed.
    model.push({ toolCalls: [{ id: 'toolu_glob', name: 'glob', input: { pattern: '*' } }] }, { hang: true });

    const first = spawnHob(['--config', path, 'start'], cleanEnv());
    running.push(first);
    await first.waitFor('hob is running on telegram as @hob_bot');
    telegram.sendText(ANN, DM, '/bg count the files in the workspace');
    await telegram.waitFor(() => telegram?.chat(100).find((m) => m.text.startsWith('Started background task t')), 10_000, 'the /bg answer');
    await model.waitForRequests(2);
    first.kill();
    await first.exited;

    model.push({ text: 'The workspace has no files.' });
    const second = spawnHob(['--config', path, 'start'], cleanEnv());
    running.push(second);
    const done = await telegram.waitFor(() => telegram?.chat(100).find((m) => m.text.startsWith('✅ Background task')), 15_000, 'the task result');
    expect(done.text).toMatch(/Background task t[0-9a-f]{8} \("count the files in the workspace"\) is done/);
    expect(done.text).toContain('The workspace has no files.');
    // Resumed, not started over: the request after the restart carries the glob call the task made before it.
    const resumed = JSON.stringify(model.requests[2]?.body.messages);
    expect(resumed).toContain('toolu_glob');
    expect(model.requests).toHaveLength(3);
    // Nothing doubled: once the outbox holds nothing more to send, hob stops; what the chat
    // shows then is all it will ever get from these two processes.
    await telegram.waitFor(() => unsettled(dir) === 0 || undefined, 10_000, 'every delivery settled');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(telegram.chat(100).filter((m) => m.text.startsWith('✅ Background task'))).toHaveLength(1);
  });
});
