import { describe, expect, it } from 'vitest';
import { UserFacingError } from '../../src/core/errors.js';
import { ConfigError } from '../../src/config/errors.js';
import { loadHobConfig } from '../../src/app/channels.js';
import { configErrorFor, freshDir } from './config-files.js';

describe('a broken config file is reported with the file, the key and the fix', () => {
  it('suggests the closest key for an unknown top-level key', () => {
    const { file, message } = configErrorFor('timzone: Europe/Berlin\n');
    expect(message).toBe(`${file}: timzone: unknown key; did you mean "timezone"?`);
  });

  it('names the full path of an unknown nested key and suggests the right one', () => {
    const { file, message } = configErrorFor('permissions:\n  mod: plan\n');
    expect(message).toBe(`${file}: permissions.mod: unknown key; did you mean "mode"?`);
  });

  it('lists the valid keys when no key is close to the unknown one', () => {
    const { file, message } = configErrorFor('gateway:\n  colour: red\n');
    expect(message).toBe(
      `${file}: gateway.colour: unknown key; valid keys are busy_mode, group_sessions, max_queue, ` +
        'max_conversations, idle_timeout_seconds, pairing_code_ttl_seconds, busy_after_ms',
    );
  });

  it('names the expected type and what was written for a wrong type', () => {
    const { file, message } = configErrorFor('model:\n  max_turns: fifty\n');
    expect(message).toBe(`${file}: model.max_turns: expected a positive integer, got string "fifty"`);
  });

  it('lists the allowed values for a bad enum value', () => {
    const { file, message } = configErrorFor('permissions:\n  mode: yolo\n');
    expect(message).toBe(`${file}: permissions.mode: expected one of default, plan, full_auto, got "yolo"`);
  });

  it('rejects a negative number where a count is expected', () => {
    const { file, message } = configErrorFor('model:\n  max_tokens: -5\n');
    expect(message).toBe(`${file}: model.max_tokens: expected a positive integer, got -5`);
  });

  it('rejects a base URL without http(s) scheme', () => {
    const { file, message } = configErrorFor('model:\n  base_url: api.example.com/v1\n');
    expect(message).toBe(
      `${file}: model.base_url: expected an http(s) URL like "https://example.com", got "api.example.com/v1"`,
    );
  });

  it('rejects an unknown time zone and gives an example of a valid one', () => {
    const { file, message } = configErrorFor('timezone: Mars/Olympus_Mons\n');
    expect(message).toBe(
      `${file}: timezone: expected an IANA time zone name like "Europe/Berlin" or "America/New_York", ` +
        'got "Mars/Olympus_Mons"',
    );
  });

  it('names the unset environment variable and the key that uses it', () => {
    const { file, message } = configErrorFor('channels:\n  telegram:\n    token: ${TELEGRAM_BOT_TOKEN}\n');
    expect(message).toBe(`${file}: channels.telegram.token: environment variable TELEGRAM_BOT_TOKEN is not set`);
  });

  it('requires a secret_token when a Telegram webhook is configured', () => {
    const { file, message } = configErrorFor(
      'channels:\n  telegram:\n    token: "123456:ABC-def_ghi"\n    webhook:\n      url: https://hob.example.com/tg\n',
    );
    expect(message).toBe(
      `${file}: channels.telegram.webhook.secret_token: missing; expected a secret of 1-256 letters, digits, ` +
        '"_" or "-" (Telegram sends it back on every update)',
    );
  });

  it('gives the line and column of a YAML syntax error', () => {
    const { file, message } = configErrorFor('permissions:\n  mode: plan\n mode: default\n');
    expect(message).toBe(`${file}: line 3, column 2: YAML syntax error: bad indentation: the keys of one mapping start at the same column`);
  });

  it('requires a token when the telegram section is present, even when it is empty', () => {
    const expected = (file: string) =>
      `${file}: channels.telegram.token: missing; expected a bot token like "123456789:AAE-abc..." from @BotFather`;
    const withKeys = configErrorFor('channels:\n  telegram:\n    allow_from: [42]\n');
    expect(withKeys.message).toBe(expected(withKeys.file));
    const empty = configErrorFor('channels:\n  telegram:\n');
    expect(empty.message).toBe(expected(empty.file));
  });

  it('never echoes a malformed secret back', () => {
    const { file, message } = configErrorFor('channels:\n  telegram:\n    token: "my-secret-value"\n');
    expect(message).toBe(
      `${file}: channels.telegram.token: expected a bot token like "123456789:AAE-abc..." from @BotFather, ` +
        'got a string of 15 characters (not shown)',
    );
  });

  it.each([
    ['a database URL with its password under the wrong key', 'timezone: "postgresql://hob:S3cretPW@db.example.com/hob"\n', 'timezone: expected an IANA time zone name like "Europe/Berlin" or "America/New_York", got a URL with a user name or password in it (not shown)', 'S3cretPW'],
    ['a Slack token under the wrong key', 'log_level: xoxb-1111-2222-abcDEF123\n', 'log_level: expected one of fatal, error, warn, info, debug, trace, silent, got a string of 24 characters (not shown)', 'abcDEF123'],
    ['an API key as the permission mode', 'permissions:\n  mode: sk-ant-api03-Zx9YqW2\n', 'permissions.mode: expected one of default, plan, full_auto, got a string of 20 characters (not shown)', 'Zx9YqW2'],
    ['a Telegram token as a base URL', 'model:\n  base_url: "123456789:AAE-abcdefghijklmnopqrstuvwxyz0123"\n', 'model.base_url: expected an http(s) URL like "https://example.com", got a string of 44 characters (not shown)', 'abcdefghij'],
    ['a key with mixed case and digits', 'gateway:\n  group_sessions: Qm9iU2VjcmV0S2V5MTIzNDU2\n', 'gateway.group_sessions: expected one of per_user, shared, got a string of 24 characters (not shown)', 'Qm9iU2Vj'],
    ['a number under a secret key', 'channels:\n  telegram:\n    token: 987654\n', 'channels.telegram.token: expected a bot token like "123456789:AAE-abc..." from @BotFather, got a number (not shown)', '987654'],
  ])('never echoes %s', (_name, text, problem, secret) => {
    const { file, message } = configErrorFor(text);
    expect(message).toBe(`${file}: ${problem}`);
    expect(message).not.toContain(secret);
  });

  it('never echoes a value that came from the environment', () => {
    const { file, message } = configErrorFor('model:\n  base_url: ${ANTHROPIC_API_KEY}\n', { ANTHROPIC_API_KEY: 'plainlowercasekey' });
    expect(message).toBe(`${file}: model.base_url: expected an http(s) URL like "https://example.com", got a value from the environment (17 characters, not shown)`);
  });

  it('still shows ordinary values that are not secrets', () => {
    const { file, message } = configErrorFor('model:\n  provider: claude-sonnet-4-5-20250929\n');
    expect(message).toBe(`${file}: model.provider: expected one of anthropic, openai, got "claude-sonnet-4-5-20250929"`);
  });

  it('lists the hook types for a hook with an unknown type, with its index', () => {
    const { file, message } = configErrorFor('hooks:\n  pre_tool_use:\n    - type: shell\n      command: ./check.sh\n');
    expect(message).toBe(`${file}: hooks.pre_tool_use[0].type: expected one of command, http, prompt, agent, got "shell"`);
  });

  it('lists every problem at once, in the order they appear in the file', () => {
    const { file, message } = configErrorFor(
      [
        'log_level: loud',
        'model:',
        '  provider: openai',
        '  max_turns: 0',
        '  prompt_caching: "yes"',
        'permissions:',
        '  mode: yolo',
        '  path_rules:',
        '    - pattern: "~/.ssh/**"',
        'hooks:',
        '  pre_tool:',
        '    - { type: http, url: "not a url" }',
        'channels:',
        '  discord:',
        '    token: ${DISCORD_BOT_TOKEN}',
        '    allow_from: [12345678901234567890]',
        '',
      ].join('\n'),
    );
    expect(message).toBe(
      [
        `${file}: log_level: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"`,
        `${file}: model.max_turns: expected a positive integer, got 0`,
        `${file}: model.prompt_caching: expected true or false, got string "yes"`,
        `${file}: permissions.mode: expected one of default, plan, full_auto, got "yolo"`,
        `${file}: permissions.path_rules[0].allow: missing; expected true or false`,
        `${file}: hooks.pre_tool: unknown key; did you mean "pre_tool_use"?`,
        `${file}: channels.discord.token: environment variable DISCORD_BOT_TOKEN is not set`,
        `${file}: channels.discord.allow_from[0]: expected a user or chat id (a string, or a whole number; ` +
          'quote ids longer than 15 digits, YAML rounds them), got 12345678901234567000',
      ].join('\n'),
    );
  });

  it('requires Slack to have either an app token or a signing secret', () => {
    const { file, message } = configErrorFor('channels:\n  slack:\n    bot_token: xoxb-1-2\n');
    expect(message).toBe(
      `${file}: channels.slack.app_token: missing; set app_token (Socket Mode, "xapp-...") or signing_secret ` +
        'and port (HTTP mode)',
    );
  });

  it('explains how to write a literal "${" when a reference is not closed', () => {
    const { file, message } = configErrorFor('hooks:\n  session_start:\n    - { type: command, command: "echo ${HOME" }\n');
    expect(message).toBe(
      `${file}: hooks.session_start[0].command: "\${" without a closing "}"; write "$\${" for a literal "\${"`,
    );
  });

  it('asks for a mapping when the file is a list', () => {
    const { file, message } = configErrorFor('- model\n- permissions\n');
    expect(message).toBe(`${file}: expected a mapping (key: value lines), got a list`);
  });

  it('names an explicitly given config file that does not exist', () => {
    const missing = `${freshDir()}/nope.yaml`;
    expect(() => loadHobConfig({ path: missing, env: {} })).toThrow(new ConfigError([`Config file ${missing} does not exist.`]));
  });

  it('names HOB_CONFIG when the file it points to does not exist', () => {
    const missing = `${freshDir()}/gone.yaml`;
    let caught: unknown;
    try {
      loadHobConfig({ env: { HOB_CONFIG: missing } });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UserFacingError);
    expect((caught as Error).message).toBe(`Config file ${missing} (named by HOB_CONFIG) does not exist.`);
  });
});
