import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { runAsk } from '../../src/cli/ask.js';
import { loadHobConfig } from '../../src/app/channels.js';
import { consoleUserId } from '../../src/cli/console-identity.js';
import { startFakeAnthropic, type AnthropicScript, type FakeAnthropic } from '../fakes/anthropic.js';
import { tempDir } from '../support/engine.js';
import { cleanEnv, spawnHob, writeConfig } from '../support/hob-process.js';

function setup(fake: FakeAnthropic) {
  const dir = tempDir();
  const path = writeConfig(dir, `data_dir: ${dir}/data\nmodel: { name: claude-test, api_key: test-key, base_url: ${fake.baseUrl}, retry: { max_attempts: 1 } }\n`);
  return { dir, path };
}

/**
 * The piped-chat cases share one `hob chat` (a start costs about a second and a half of CPU):
 * each is a conversation of its own, begun with `/new`, in the order below. The model's
 * answers are queued in that order, two per case (a tool call, then the answer to its
 * result), and each case reads its own part of the output: what hob printed after its `/new`.
 */
const PIPED: { input: string; answers: AnthropicScript[] }[] = [
  { input: 'make the file\ny\n/status\n/usage\n', answers: [{ toolCalls: [{ name: 'bash', input: { command: 'echo hi > made.txt' } }] }, { text: 'Made it.' }] },
  { input: 'echo it\na\n/permissions\n/permissions forget 1\n/permissions\n', answers: [{ toolCalls: [{ name: 'bash', input: { command: 'echo once' } }] }, { text: 'Done.' }] },
  { input: 'show my ssh key\n', answers: [{ toolCalls: [{ name: 'read_file', input: { path: '~/.ssh/id_rsa' } }] }, { text: 'That file is off limits.' }] },
  { input: 'run it\ny\n', answers: [{ toolCalls: [{ name: 'bash', input: { command: 'echo first line; echo second line; exit 3' } }] }, { text: 'It failed.' }] },
  { input: 'delete it\nn\n', answers: [{ toolCalls: [{ name: 'bash', input: { command: 'rm -rf /tmp/x' } }] }, { text: 'Understood, nothing deleted.' }] },
  { input: 'make another file\nsure thing\n\ny\n', answers: [{ toolCalls: [{ name: 'bash', input: { command: 'echo hi > again.txt' } }] }, { text: 'Made it again.' }] },
  // web_fetch loads its guarded GET (a chunk of dist/ of its own) with its first call.
  { input: 'fetch my router page\n', answers: [{ toolCalls: [{ name: 'web_fetch', input: { url: 'http://127.0.0.1:9/' } }] }, { text: 'That address is this machine.' }] },
];

describe('hob chat, piped', () => {
  let fake: FakeAnthropic;
  let dir: string;
  let exitCode: number | null;
  let parts: string[];
  /** The model's requests of case `index`: its first turn and the turn after the tool. */
  const requestsOf = (index: number) => fake.requests.slice(2 * index, 2 * index + 2);

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    for (const { answers } of PIPED) fake.push(...answers);
    const made = setup(fake);
    dir = made.dir;
    const hob = spawnHob(['--config', made.path, 'chat'], cleanEnv());
    hob.child.stdin.end(PIPED.map(({ input }) => input).join('/new\n'));
    exitCode = await hob.exited;
    parts = hob.output().split('Started a new conversation.');
  }, 60_000);
  afterAll(async () => fake.close());

  it('runs every case in turn and exits 0 at the end of its input', () => {
    expect(exitCode).toBe(0);
    expect(parts).toHaveLength(PIPED.length);
    expect(fake.requests).toHaveLength(2 * PIPED.length);
  });

  it('asks before a command, reads y from the next line, and reports status and usage', () => {
    const out = parts[0] ?? '';
    expect(out).toContain('Allow bash?');
    expect(out).toContain('echo hi > made.txt');
    expect(out).toContain('Made it.');
    expect(out).toMatch(/model claude-test · session ses_[\w-]+ · 4 messages/);
    expect(out).toContain('Requests: 2');
    expect(existsSync(join(dir, 'data', 'workspace', 'made.txt'))).toBe(true);
  });

  it('a (always) is listed by /permissions and taken back with /permissions forget', () => {
    const out = parts[1] ?? '';
    expect(out).toContain('1. bash: exactly `echo once`');
    expect(out).toContain('Taken back: bash: exactly `echo once`. It will ask again.');
    expect(out.split('You have no "always allow" rules.')).toHaveLength(2);
  });

  it('a call refused by a rule gets a line too, with the reason', () => {
    const out = parts[2] ?? '';
    expect(out).toMatch(/✗ read_file: .*id_rsa — denied: /);
    expect(out).toContain('That file is off limits.');
  });

  it('a failed command shows its first line and its exit code', () => {
    expect(parts[3]).toMatch(/✗ bash failed \([\d.]+s\): first line … \[exit code 3\]/);
  });

  it('n denies, and the model hears it', () => {
    expect(parts[4]).toContain('Understood, nothing deleted.');
    expect(JSON.stringify(requestsOf(4)[1]?.body.messages)).toContain('The person denied permission');
  });

  it('an approval answer other than y, a or n asks again', () => {
    const out = parts[5] ?? '';
    expect(out.split('Please answer y (once), a (always) or n (no)')).toHaveLength(3);
    expect(out).toContain('Made it again.');
    expect(existsSync(join(dir, 'data', 'workspace', 'again.txt'))).toBe(true);
  });

  it('web_fetch runs on its first call and refuses a loopback address in the same words', () => {
    expect(parts[6]).toContain('That address is this machine.');
    expect(JSON.stringify(requestsOf(6)[1]?.body.messages)).toContain('Refused to fetch http://127.0.0.1:9/: 127.0.0.1 is a loopback address (this machine)');
  });
});

/**
 * `hob ask --json` as its action in src/cli.ts runs it (the app from the config file, the
 * `cli:ask` session), in this process: the JSON lines it prints are what this is about. A
 * spawned `hob ask` costs about a second of CPU; test/cli/extensions-cli.test.ts spawns one.
 */
describe('hob ask', () => {
  let fake: FakeAnthropic | undefined;
  afterAll(async () => fake?.close());

  it('ask --json prints events as JSON lines and denies approvals without --yes', async () => {
    fake = await startFakeAnthropic();
    fake.push({ toolCalls: [{ name: 'bash', input: { command: 'touch nope' } }] }, { text: 'I was not allowed to.' });
    const { path } = setup(fake);
    const { config } = loadHobConfig({ path });
    const app = await createApp({ config, configPath: path, channel: 'a one-off command line question', logDestination: 'silent' });
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    let exitCode: number;
    try {
      app.conversations.startSession('cli:ask');
      exitCode = await runAsk({ engine: app.engine('cli:ask'), prompt: ['touch', 'nope'].join(' '), json: true, yes: false, userId: consoleUserId(), out });
    } finally {
      await app.close();
    }
    expect(exitCode).toBe(0);
    const events = printed.trim().split('\n').map((line) => JSON.parse(line) as { type: string; content?: string });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'end_turn' });
    expect(events.find((event) => event.type === 'tool_finished')).toBeUndefined();
    expect(JSON.stringify(fake.requests[1]?.body.messages)).toContain('denied permission');
  });
});
