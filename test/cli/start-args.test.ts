import { describe, expect, it } from 'vitest';
import { plainStart } from '../../src/cli/start-args.js';

/**
 * cli.ts starts a plain `hob start` without commander; anything else must still reach commander
 * (its help, its errors, the other commands), so only the exact shapes are taken.
 */
describe('a plain hob start', () => {
  it('is `start` alone, or after one --config/-c naming the file', () => {
    expect(plainStart(['start'])).toEqual({ config: undefined });
    expect(plainStart(['--config', 'hob.yaml', 'start'])).toEqual({ config: 'hob.yaml' });
    expect(plainStart(['-c', '/etc/hob/config.yaml', 'start'])).toEqual({ config: '/etc/hob/config.yaml' });
    expect(plainStart(['--config=my config.yaml', 'start'])).toEqual({ config: 'my config.yaml' });
  });

  it('leaves every other command line to commander', () => {
    for (const args of [
      [],
      ['ask', 'start'],
      ['start', '--help'],
      ['start', 'now'],
      ['--help', 'start'],
      ['--config', 'start'],
      ['--config=', 'start'],
      ['--config', '-x', 'start'],
      ['-c', 'a.yaml', '-c', 'b.yaml', 'start'],
      ['--verbose', 'a.yaml', 'start'],
      ['chat'],
    ]) {
      expect(plainStart(args), args.join(' ')).toBeUndefined();
    }
  });
});
