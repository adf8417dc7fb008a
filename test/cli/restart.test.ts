import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig, type HobProcess } from '../support/hob-process.js';

/**
 * One chain of `hob chat` processes on one data dir (a start costs about a second of CPU):
 * the chat that comes back after the first case's kill is the one the second case kills
 * mid-stream, and a third picks that reply up.
 */
let fake: FakeAnthropic;
let path: string;
const running: HobProcess[] = [];
/** The chat the first case left running, if it got that far. */
let resumedChat: HobProcess | undefined;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  path = config(tempDir(), fake.baseUrl);
});

afterAll(async () => {
  for (const hob of running.splice(0)) hob.kill();
  await fake.close();
});

function chat(): HobProcess {
  const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
  running.push(hob);
  return hob;
}

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
    fake.push({ toolCalls: [{ id: 'toolu_long', name: 'bash', input: { command: 'sleep 30' } }] });

    const first = chat();
    first.child.stdin.write('run the long job\n');
    await first.waitFor('→ bash: sleep 30');
    first.kill();
    await first.exited;

    fake.push({ text: 'The job was cut off by a restart. Run it again?' }, { text: 'We were running the long job.' });
    const second = chat();
    await second.waitFor('Run it again?');
    second.child.stdin.write('what were we doing?\n');
    await second.waitFor('We were running the long job.');

    expect(second.output()).toContain('(resuming the run that was interrupted)');
    expect(second.output()).toContain('We were running the long job.');
    const resumed = fake.requests[1]?.body;
    const interrupted = resumed?.messages[2]?.content as { type: string; tool_use_id: string; is_error: boolean; content: unknown }[];
    expect(interrupted[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_long', is_error: true });
    expect(roles(fake.requests[2]?.body)).toEqual(['user:text+text', 'assistant:tool_use', 'user:tool_result', 'assistant:text', 'user:text+text']); // each message starts with its time
    resumedChat = second;
  });

  it('answers a message whose reply was cut off mid-stream', async () => {
    const seen = fake.requests.length;
    fake.push({ hang: true, text: 'Let me th' });

    // The chat that came back after the first case's kill (a fresh one when that case failed early).
    const first = resumedChat ?? chat();
    first.child.stdin.write('remember that my cat is called Miso\n');
    await first.waitFor('Let me th');
    first.kill();
    await first.exited;

    fake.push({ text: 'Noted: your cat is Miso.' });
    const second = chat();
    second.child.stdin.end();
    await second.exited;
    expect(second.output()).toContain('Noted: your cat is Miso.');
    const body = fake.requests[seen + 1]?.body;
    expect(JSON.stringify(body?.messages)).toContain('my cat is called Miso');
  });
});
