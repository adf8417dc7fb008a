import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadHobConfig } from '../../src/app/channels.js';
import { runChat, terminalChat } from '../../src/cli/chat.js';
import { consoleUserId } from '../../src/cli/console-identity.js';
import { runSessions } from '../../src/cli/sessions.js';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';

let fake: FakeAnthropic | undefined;
afterEach(async () => fake?.close());

/**
 * `hob chat` as its action in src/cli.ts runs it (the app from the config file, the terminal's
 * session), in this process: what it prints is what this test is about. A spawned `hob chat`
 * costs about a second of CPU; test/cli/chat-ask.test.ts and restart.test.ts spawn it.
 */
async function chatInProcess(path: string, input: string): Promise<string> {
  const { config } = loadHobConfig({ path });
  const app = await createApp({ config, configPath: path, channel: 'a terminal', logDestination: 'silent' });
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  try {
    await runChat({ ...terminalChat(app), input: new PassThrough().end(input), output, interactive: false });
  } finally {
    await app.close();
  }
  return shown;
}

describe('past sessions in the terminal', () => {
  it('hob chat lists and resumes its sessions and compacts by hand; hob sessions lists and exports Markdown', async () => {
    fake = await startFakeAnthropic();
    fake.push({ text: `Noted: the VPN port is 51820. ${'Some detail about the tunnel. '.repeat(100)}` }, { text: 'Hello again.' }, { text: 'It was 51820.' });
    const dir = tempDir();
    const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { name: claude-test, api_key: test-key, base_url: ${fake.baseUrl}, retry: { max_attempts: 1 } }\n`);
    const out = await chatInProcess(path, 'The VPN port is 51820\n/new\nhi\n/sessions\n/resume 2\nWhich VPN port?\n/compact\n');
    expect(out).toMatch(/1\. hi — .* \(current\)\n2\. The VPN port is 51820 — /);
    expect(out).toContain('Resumed “The VPN port is 51820”');
    expect(out).toContain('It was 51820.');
    expect(out).toMatch(/Compacted the conversation \(level 3\)/);
    expect(JSON.stringify(fake.requests[2]?.body.messages)).toContain('The VPN port is 51820');

    // `hob sessions list` in this process (its function, as the command calls it)...
    const listed = new PassThrough();
    let list = '';
    listed.on('data', (chunk: Buffer) => (list += chunk.toString()));
    runSessions(loadHobConfig({ path }).config, consoleUserId(), 'list', undefined, {}, listed);
    expect(list).toMatch(/1\. The VPN port is 51820 — .*4 messages/);
    // ...and `hob sessions export` as a person runs it: the command's one process here.
    const file = join(dir, 'vpn.md');
    const exported = spawnHob(['--config', path, 'sessions', 'export', '1', '--out', file], cleanEnv());
    expect(await exported.exited).toBe(0);
    expect(exported.output()).toContain(`to ${file}.`);
    const markdown = readFileSync(file, 'utf8');
    expect(markdown).toMatch(/^# The VPN port is 51820/);
    expect(markdown).toContain('It was 51820.');
  });
});
