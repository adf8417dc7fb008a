import { describe, expect, it } from 'vitest';
import { loadHobConfig } from '../../src/app/channels.js';
import type { HobConfig } from '../../src/config/schema.js';
import type { DiscordConfig } from '../../adapters/discord/index.js';
import type { TelegramConfig } from '../../adapters/telegram/index.js';
import { configErrorFor, freshDir, writeConfig } from './config-files.js';

function load(text: string, env: NodeJS.ProcessEnv = {}): HobConfig {
  return loadHobConfig({ path: writeConfig(text), env: { HOME: freshDir(), ...env } }).config;
}

describe('a config that is not valid YAML names the line, the column and the fix', () => {
  it.each([
    ['a key indented out of line', 'permissions:\n  mode: plan\n mode: default\n', 'line 3, column 2: YAML syntax error: bad indentation: the keys of one mapping start at the same column'],
    ['a key written twice', 'log_level: info\nmodel:\n  name: a\n  name: b\n', 'line 4, column 3: YAML syntax error: duplicate key "name": a key may appear once in a mapping'],
    ['a key written twice inside { }', 'model: { name: a, name: b }\n', 'line 1, column 19: YAML syntax error: duplicate key "name": a key may appear once in a mapping'],
    ['a tab as indentation', 'model:\n\tname: x\n', 'line 2, column 1: YAML syntax error: a tab in the indentation; indent with spaces'],
    ['a plain value holding ": "', 'timezone: Europe: Berlin\n', 'line 1, column 17: YAML syntax error: a value holding ": " must be quoted (key: "a: b")'],
    ['a quote left open', 'log_level: "info\n', 'line 2, column 1: YAML syntax error: a "quoted" string is not closed'],
    ['a list left open', 'channels:\n  telegram:\n    allow_from: [1, 2\n', 'line 4, column 1: YAML syntax error: a [list] or {mapping} is not closed: a "]" or "}" is missing'],
    ['an alias without its anchor', 'model:\n  name: *model_name\n', 'line 2, column 9: YAML syntax error: alias *model_name names no anchor: set &model_name on a value above it'],
    ['a tag hob does not read', 'log_level: !!binary aGVsbG8=\n', 'line 1, column 12: YAML syntax error: tag !!binary is not supported here; remove it'],
    ['a second document', '# hob\nlog_level: info\n---\nlog_level: debug\n', 'line 3, column 1: YAML syntax error: a second document (a "---" line after the settings); a file holds one, so remove the line or what follows it'],
  ])('%s', (_name, text, problem) => {
    const { file, message } = configErrorFor(text);
    expect(message).toBe(`${file}: ${problem}`);
  });

  it('refuses aliases that expand to more than memory should hold, without trying', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (const [index, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
      const previous = String.fromCharCode('a'.charCodeAt(0) + index);
      levels.push(`${name}: &${name} [${Array.from({ length: 10 }, () => `*${previous}`).join(', ')}]`);
    }
    const { file, message } = configErrorFor(`${levels.join('\n')}\n`);
    expect(message).toBe(`${file}: YAML syntax error: its aliases (*name) expand to more than 100,000 values; write the values out instead`);
  });
});

describe('what a config means is YAML 1.2 (as hob has always read it)', () => {
  it('an anchored value is reused where its alias stands, ${VAR} filled in each place', () => {
    const config = load(
      'channels:\n' +
        '  telegram: { token: "123:abc", allow_from: &owners ["42", "${SECOND_OWNER}"] }\n' +
        '  discord: { token: abc, allow_from: *owners }\n',
      { SECOND_OWNER: '43' },
    );
    expect((config.channels.telegram as TelegramConfig | undefined)?.allow_from).toEqual(['42', '43']);
    expect((config.channels.discord as DiscordConfig | undefined)?.allow_from).toEqual(['42', '43']);
  });

  it('yes, no, on and off are words, not booleans: a true/false key says what to write', () => {
    const { file, message } = configErrorFor('model:\n  prompt_caching: on\n');
    expect(message).toBe(`${file}: model.prompt_caching: expected true or false, got string "on"`);
    // And a word is never turned into a boolean where a string belongs (the "Norway problem").
    expect(load('model:\n  name: no\n').model.name).toBe('no');
    expect(load('model:\n  prompt_caching: false\n').model.prompt_caching).toBe(false);
  });

  it('a number with a leading zero is decimal, 0o is octal, and a date stays the text written', () => {
    expect(load('model:\n  max_turns: 010\n').model.max_turns).toBe(10);
    expect(load('model:\n  max_turns: 0o10\n').model.max_turns).toBe(8);
    expect(load('model:\n  name: 2025-06-01\n').model.name).toBe('2025-06-01');
  });

  it('reads a file that starts with "---", ends with "...", has a BOM or Windows line ends', () => {
    expect(load('---\nlog_level: debug\n...\n').log_level).toBe('debug');
    expect(load('\uFEFFlog_level: warn\r\nmodel:\r\n  name: m\r\n').log_level).toBe('warn');
  });

  it('an empty file, or one with only comments, runs on the defaults', () => {
    expect(load('').log_level).toBe(load('# nothing here yet\n').log_level);
  });
});
