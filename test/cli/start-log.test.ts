import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StartLog } from '../../src/cli/start-log.js';
import { createLogger, flushLog } from '../../src/logger.js';

const root = mkdtempSync(join(tmpdir(), 'hob-start-log-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function logLines(dataDir: string): Record<string, unknown>[] {
  return readFileSync(join(dataDir, 'logs', 'hob.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
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

    const lines = logLines(dataDir);
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
