import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

let fake: FakeAnthropic | undefined;
const running: HobProcess[] = [];

afterEach(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await fake?.close();
});

function config(dir: string, baseUrl: string): string {
  return writeConfig(
    dir,
    `data_dir: ${dir}/data
model:
  provider: anthropic
  name: claude-test
  api_key: test-key
  base_url: ${baseUrl}
  retry: { max_attempts: 1 }
permissions:
  mode: full_auto
`,
  );
}

const roles = (body: { messages: { role: string; content: unknown }[] } | undefined) =>
  body?.messages.map((m) => (typeof m.content === 'string' ? `${m.role}:text` : `${m.role}:${(m.content as { type: string }[]).map((b) => b.type).join('+')}`));

describe('hob chat survives being killed', () => {
  it('continues a tool loop cut off by a kill, with the whole history', async () => {
    fake = await startFakeAnthropic();
    const dir = tempDir();
    const path = config(dir, fake.baseUrl);
    fake.push({ toolCalls: [{ id: 'toolu_long', name: 'bash', input: { command: 'sleep 30' } }] });

    const first = spawnHob(['--config', path, 'chat'], cleanEnv());
    running.push(first);
    first.child.stdin.write('run the long job\n');
    await first.waitFor('→ bash: sleep 30');
    first.kill();
    await first.exited;

    fake.push({ text: 'The job was cut off by a restart. Run it again?' }, { text: 'We were running the long job.' });
    const second = spawnHob(['--config', path, 'chat'], cleanEnv());
    running.push(second);
    await second.waitFor('Run it again?');
    second.child.stdin.end('what were we doing?\n');
    await second.exited;

    expect(second.output()).toContain('(resuming the run that was interrupted)');
    expect(second.output()).toContain('We were running the long job.');
    const resumed = fake.requests[1]?.body;
    const interrupted = resumed?.messages[2]?.content as { type: string; tool_use_id: string; is_error: boolean; content: unknown }[];
    expect(interrupted[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_long', is_error: true });
    expect(roles(fake.requests[2]?.body)).toEqual(['user:text+text', 'assistant:tool_use', 'user:tool_result', 'assistant:text', 'user:text+text']); // each message starts with its time
  });

  it('answers a message whose reply was cut off mid-stream', async () => {
    fake = await startFakeAnthropic();
    const dir = tempDir();
    const path = config(dir, fake.baseUrl);
    fake.push({ hang: true, text: 'Let me th' });

    const first = spawnHob(['--config', path, 'chat'], cleanEnv());
    running.push(first);
    first.child.stdin.write('remember that my cat is called Miso\n');
    await first.waitFor('Let me th');
    first.kill();
    await first.exited;

    fake.push({ text: 'Noted: your cat is Miso.' });
    const second = spawnHob(['--config', path, 'chat'], cleanEnv());
    running.push(second);
    second.child.stdin.end();
    await second.exited;
    expect(second.output()).toContain('Noted: your cat is Miso.');
    const body = fake.requests[1]?.body;
    expect(JSON.stringify(body?.messages)).toContain('my cat is called Miso');
  });
});
