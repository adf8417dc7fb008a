import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';

let fake: FakeAnthropic | undefined;
afterEach(async () => fake?.close());

function setup() {
  const dir = tempDir();
  const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { name: claude-test, api_key: test-key, base_url: ${fake?.baseUrl}, retry: { max_attempts: 1 } }\n`);
  return { dir, path };
}

describe('hob chat and hob ask', () => {
  it('piped chat: asks before a command, reads y from the next line, and reports status and usage', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'echo hi > made.txt' } }] }, { text: 'Made it.' });
    const { dir, path } = setup();
    const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
    hob.child.stdin.end('make the file\ny\n/status\n/usage\n');
    expect(await hob.exited).toBe(0);
    const out = hob.output();
    expect(out).toContain('Allow bash?');
    expect(out).toContain('echo hi > made.txt');
    expect(out).toContain('Made it.');
    expect(out).toMatch(/model claude-test · session ses_[\w-]+ · 4 messages/);
    expect(out).toContain('Requests: 2');
    expect(existsSync(join(dir, 'data', 'workspace', 'made.txt'))).toBe(true);
  });

  it('piped chat: a (always) is listed by /permissions and taken back with /permissions forget', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'echo once' } }] }, { text: 'Done.' });
    const { path } = setup();
    const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
    hob.child.stdin.end('echo it\na\n/permissions\n/permissions forget 1\n/permissions\n');
    expect(await hob.exited).toBe(0);
    const out = hob.output();
    expect(out).toContain('1. bash: exactly `echo once`');
    expect(out).toContain('Taken back: bash: exactly `echo once`. It will ask again.');
    expect(out.split('You have no "always allow" rules.')).toHaveLength(2);
  });

  it('piped chat: a call refused by a rule gets a line too, with the reason', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'read_file', input: { path: '~/.ssh/id_rsa' } }] }, { text: 'That file is off limits.' });
    const { path } = setup();
    const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
    hob.child.stdin.end('show my ssh key\n');
    expect(await hob.exited).toBe(0);
    expect(hob.output()).toMatch(/✗ read_file: .*id_rsa — denied: /);
    expect(hob.output()).toContain('That file is off limits.');
  });

  it('piped chat: a failed command shows its first line and its exit code', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'echo first line; echo second line; exit 3' } }] }, { text: 'It failed.' });
    const { path } = setup();
    const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
    hob.child.stdin.end('run it\ny\n');
    expect(await hob.exited).toBe(0);
    expect(hob.output()).toMatch(/✗ bash failed \([\d.]+s\): first line … \[exit code 3\]/);
  });

  it('piped chat: n denies, and the model hears it', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'rm -rf /tmp/x' } }] }, { text: 'Understood, nothing deleted.' });
    const { path } = setup();
    const hob = spawnHob(['--config', path, 'chat'], cleanEnv());
    hob.child.stdin.end('delete it\nn\n');
    await hob.exited;
    expect(hob.output()).toContain('Understood, nothing deleted.');
    expect(JSON.stringify(fake.requests[1]?.body.messages)).toContain('The person denied permission');
  });

  it('ask --json prints events as JSON lines and denies approvals without --yes', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'touch nope' } }] }, { text: 'I was not allowed to.' });
    const { path } = setup();
    const hob = spawnHob(['--config', path, 'ask', '--json', 'touch', 'nope'], cleanEnv());
    hob.child.stdin.end();
    expect(await hob.exited).toBe(0);
    const events = hob.output().trim().split('\n').map((line) => JSON.parse(line) as { type: string; content?: string });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'end_turn' });
    expect(events.find((event) => event.type === 'tool_finished')).toBeUndefined();
    expect(JSON.stringify(fake.requests[1]?.body.messages)).toContain('denied permission');
  });
});
