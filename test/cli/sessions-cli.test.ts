import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';

let fake: FakeAnthropic | undefined;
afterEach(async () => fake?.close());

describe('past sessions in the terminal', () => {
  it('hob chat lists and resumes its sessions and compacts by hand; hob sessions lists and exports Markdown', async () => {
    fake = await startFakeAnthropic();
    fake.push({ text: `Noted: the VPN port is 51820. ${'Some detail about the tunnel. '.repeat(100)}` }, { text: 'Hello again.' }, { text: 'It was 51820.' });
    const dir = tempDir();
    const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { name: claude-test, api_key: test-key, base_url: ${fake.baseUrl}, retry: { max_attempts: 1 } }\n`);
    const chat = spawnHob(['--config', path, 'chat'], cleanEnv());
    chat.child.stdin.end('The VPN port is 51820\n/new\nhi\n/sessions\n/resume 2\nWhich VPN port?\n/compact\n');
    expect(await chat.exited).toBe(0);
    const out = chat.output();
    expect(out).toMatch(/1\. hi — .* \(current\)\n2\. The VPN port is 51820 — /);
    expect(out).toContain('Resumed “The VPN port is 51820”');
    expect(out).toContain('It was 51820.');
    expect(out).toMatch(/Compacted the conversation \(level 3\)/);
    expect(JSON.stringify(fake.requests[2]?.body.messages)).toContain('The VPN port is 51820');

    const list = spawnHob(['--config', path, 'sessions', 'list'], cleanEnv());
    expect(await list.exited).toBe(0);
    expect(list.output()).toMatch(/1\. The VPN port is 51820 — .*4 messages/);
    const file = join(dir, 'vpn.md');
    const exported = spawnHob(['--config', path, 'sessions', 'export', '1', '--out', file], cleanEnv());
    expect(await exported.exited).toBe(0);
    const markdown = readFileSync(file, 'utf8');
    expect(markdown).toMatch(/^# The VPN port is 51820/);
    expect(markdown).toContain('It was 51820.');
  });
});
