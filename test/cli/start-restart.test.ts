import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram/index.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

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

function config(dir: string): string {
  return writeConfig(
    dir,
    `data_dir: ${dir}/data
model: { provider: anthropic, name: claude-test, api_key: test-key, base_url: ${model?.baseUrl}, retry: { max_attempts: 1 } }
channels:
  console: { enabled: false }
  telegram: { token: "${telegram?.token}", api_root: ${telegram?.apiRoot}, allow_from: ["100"] }
`,
  );
}

function start(path: string): HobProcess {
  const hob = spawnHob(['--config', path, 'start'], cleanEnv());
  running.push(hob);
  return hob;
}

describe('hob start survives being killed', () => {
  it('keeps a pending approval and an undelivered reply across a kill: nothing lost, nothing sent twice', async () => {
    model = await startFakeAnthropic();
    telegram = await startFakeTelegram({ botUsername: 'hob_bot' });
    const path = config(tempDir('hob-start-'));
    model.push({ toolCalls: [{ id: 'toolu_rm', name: 'bash', input: { command: 'rm -rf build' } }] });

    const first = start(path);
    await first.waitFor('hob is running on telegram as @hob_bot');
    telegram.sendText(ANN, DM, 'clean the build');
    await telegram.waitFor(() => telegram?.chat(100).find((m) => m.text.includes('rm -rf build')), 10_000, 'the approval prompt');
    // A second message in another conversation whose reply cannot be delivered yet.
    model.push({ text: 'Pong from hob.' });
    for (let i = 0; i < 4; i++) telegram.failNext('sendMessage', { code: 500, description: 'Internal Server Error' });
    telegram.sendText({ id: 200, first_name: 'Bob' }, { id: -5, type: 'group' }, '@hob_bot ping');
    telegram.sendText(ANN, { id: -5, type: 'group' }, '@hob_bot ping');
    await model.waitForRequests(2);
    await telegram.waitForCall('sendMessage', (call) => JSON.stringify(call.body).includes('Pong from hob'));
    first.kill();
    await first.exited;

    model.push({ text: 'Do you still want me to delete build?' });
    const second = start(path);
    await telegram.waitFor(() => telegram?.chat(-5).find((m) => m.text.includes('Pong from hob.')), 15_000, 'the undelivered reply');
    await telegram.waitFor(() => telegram?.chat(100).find((m) => m.text.includes('still want me to delete build')), 15_000, 'the resumed run');
    const approval = telegram.chat(100).find((m) => m.text.includes('rm -rf build'));
    expect(approval?.text).toContain('cancelled');
    expect(telegram.chat(-5).filter((m) => m.text.includes('Pong from hob.'))).toHaveLength(1);
    const resumed = JSON.stringify(model.requests[2]?.body.messages);
    expect(resumed).toContain('Not run: hob restarted while this call waited for approval');
    second.kill();
  });
});
