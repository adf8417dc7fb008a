import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { StartLog } from '../../src/cli/start-log.js';
import { createLogger, flushLog } from '../../src/logger.js';

const root = mkdtempSync(join(tmpdir(), 'hob-start-log-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function logLines(dataDir: string): Record<string, unknown>[] {
  const text = readFileSync(join(dataDir, 'logs', 'hob.log'), { encoding: 'utf8', flag: 'a+' }).trim();
  return text ? text.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>) : [];
}

describe("hob start's log before pino is loaded", () => {
  it('writes what the channels logged while it loaded, in order and tagged with their platform, then everything at once; tokens stay redacted', async () => {
    const dataDir = join(root, 'data');
    const log = new StartLog();
    const telegram = log.forChannel('telegram');
    const slack = log.forChannel('slack');
    telegram.warn({ attempt: 1 }, 'getMe failed; retrying');
    slack.info({ token: 'xoxb-secret-1' }, 'socket opened');
    log.error({ err: 'boom' }, 'unhandled rejection (hob keeps running)');

    const logger = log.attach(createLogger({ dataDir, level: 'info', destination: 'file' }));
    telegram.info({}, 'polling');
    await flushLog(logger);
    // The file opens in the background (pino's async destination): on a busy machine after the flush.
    const lines = await vi.waitFor(() => {
      const written = logLines(dataDir);
      if (written.length < 4) throw new Error(`${written.length} lines so far`);
      return written;
    }, { timeout: 10_000, interval: 20 });
    expect(lines.map(({ msg, platform }) => [msg, platform])).toEqual([
      ['getMe failed; retrying', 'telegram'],
      ['socket opened', 'slack'],
      ['unhandled rejection (hob keeps running)', undefined],
      ['polling', 'telegram'],
    ]);
    expect(lines[0]).toMatchObject({ level: 40, attempt: 1 });
    expect(lines[1]).toMatchObject({ token: '[redacted]' });
    expect(readFileSync(join(dataDir, 'logs', 'hob.log'), 'utf8')).not.toContain('xoxb-secret-1');
  });
});
