import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

const ANN = { id: 100, first_name: 'Ann' };
const DM = { id: 100, type: 'private' as const };

/**
 * One chain of `hob start` processes on one data dir (a start costs one to two seconds of
 * CPU): the start that comes back after the kill of the first case is the one the second
 * case stops with SIGTERM, and a third start picks that run up.
 */
let model: FakeAnthropic;
let telegram: FakeTelegram;
let path: string;
const running: HobProcess[] = [];
/** The hob the first case left running, if it got that far. */
let resumed: HobProcess | undefined;

beforeAll(async () => {
  model = await startFakeAnthropic();
  telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
  path = config(tempDir('hob-start-'));
});

afterAll(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await telegram.close();
  await model.close();
});

function config(dir: string): string {
  return writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram.token}", api_root: ${telegram.apiRoot}, allow_from: ["100"] }
`,
  );
}

function start(at: string): HobProcess {
  const hob = spawnHob(['--config', at, 'start'], cleanEnv());
  running.push(hob);
  return hob;
}

describe('hob start survives being killed', () => {
  it('keeps a pending approval and an undelivered reply across a kill: nothing lost, nothing sent twice', async () => {
    model.push({ toolCalls: [{ id: 'toolu_rm', name: 'bash', input: { command: 'rm -rf build' } }] });

    const first = start(path);
    await first.waitFor('hob is running on telegram as @hob_bot');
    telegram.sendText(ANN, DM, 'clean the build');
    await telegram.waitFor(() => telegram.chat(100).find((m) => m.text.includes('rm -rf build')), 10_000, 'the approval prompt');
    // A second message in another conversation whose reply cannot be delivered yet.
    model.push({ text: 'Pong from hob.' });
    // Two 500s: the first reaches this process (auto-retry then waits 3 s, and the kill comes
    // first), the second the next one. More only add auto-retry's doubling pauses.
    for (let i = 0; i < 2; i++) telegram.failNext('sendMessage', { code: 500, description: 'Internal Server Error' });
    telegram.sendText({ id: 200, first_name: 'Bob' }, { id: -5, type: 'group' }, '@hob_bot ping');
    telegram.sendText(ANN, { id: -5, type: 'group' }, '@hob_bot ping');
    await model.waitForRequests(2);
    await telegram.waitForCall('sendMessage', (call) => JSON.stringify(call.body).includes('Pong from hob'));
    first.kill();
    await first.exited;

    model.push({ text: 'Do you still want me to delete build?' });
    const second = start(path);
    await telegram.waitFor(() => telegram.chat(-5).find((m) => m.text.includes('Pong from hob.')), 15_000, 'the undelivered reply');
    await telegram.waitFor(() => telegram.chat(100).find((m) => m.text.includes('still want me to delete build')), 15_000, 'the resumed run');
    const approval = telegram.chat(100).find((m) => m.text.includes('rm -rf build'));
    expect(approval?.text).toContain('cancelled');
    expect(telegram.chat(-5).filter((m) => m.text.includes('Pong from hob.'))).toHaveLength(1);
    const resumedRun = JSON.stringify(model.requests[2]?.body.messages);
    expect(resumedRun).toContain('Not run: hob restarted while this call waited for approval');
    resumed = second;
  }, 60_000);

  it('on SIGTERM stops a running command (no process left behind), exits 0, and the next start picks the run up', async () => {
    const seen = model.requests.length;
    const marker = `sleep 37.${Date.now() % 100_000}`; // a unique argument, to find that very process
    model.push({ toolCalls: [{ id: 'toolu_sleep', name: 'bash', input: { command: `${marker}; echo woke` } }] });

    // The start that came back after the first case's kill (a fresh one when that case failed early).
    const first = resumed ?? start(path);
    await first.waitFor('hob is running on telegram as @hob_bot');
    telegram.sendText(ANN, DM, 'take a nap');
    const prompt = await telegram.waitFor(() => telegram.chat(100).find((m) => m.text.includes('sleep 37')), 10_000, 'the approval prompt');
    const allow = (prompt.replyMarkup as { inline_keyboard: { text: string; callback_data: string }[][] }).inline_keyboard.flat().find((b) => b.text === 'Allow once');
    telegram.pressButton(ANN, DM, prompt.messageId, allow?.callback_data ?? '');
    const running = () => spawnSync('pgrep', ['-f', marker]).status === 0;
    for (let i = 0; i < 200 && !running(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running(), JSON.stringify(telegram.chat(100).map((m) => m.text))).toBe(true);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(spawnSync('pgrep', ['-f', marker]).status).toBe(1); // killed with hob, not orphaned

    model.push({ text: 'My nap was cut short by a restart. Again?' });
    const second = start(path);
    await telegram.waitFor(() => telegram.chat(100).find((m) => m.text.includes('cut short by a restart')), 15_000, 'the resumed run');
    expect(JSON.stringify(model.requests[seen + 1]?.body.messages)).toContain('hob is shutting down');
  }, 60_000);
});
