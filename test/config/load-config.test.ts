import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserFacingError } from '../../src/core/errors.js';
import { requireModelKey } from '../../src/config/load.js';
import { loadHobConfig } from '../../src/app/channels.js';
import type { HobConfig } from '../../src/config/schema.js';
import { freshDir, writeConfig } from './config-files.js';
import type { TelegramConfig } from '../../adapters/telegram/index.js';
import type { DiscordConfig } from '../../adapters/discord/index.js';

function load(text: string, env: NodeJS.ProcessEnv = {}): HobConfig {
  const home = freshDir();
  return loadHobConfig({ path: writeConfig(text), env: { HOME: home, ...env } }).config;
}

describe('defaults', () => {
  it('runs on defaults, with every default filled in, when there is no config file', () => {
    const home = freshDir();
    const loaded = loadHobConfig({ env: { HOME: home } });
    expect(loaded.path).toBeUndefined();
    expect(loaded.config).toEqual({
      data_dir: join(home, '.hob'),
      timezone: 'UTC',
      log_level: 'info',
      model: {
        provider: 'anthropic',
        name: 'claude-sonnet-4-6',
        api_key: undefined,
        base_url: 'https://api.anthropic.com',
        max_tokens: 8192,
        max_turns: 50,
        prompt_caching: true,
        fallback: [],
        retry: { max_attempts: 4, base_delay_ms: 500, max_delay_ms: 30000 },
      },
      permissions: {
        mode: 'default',
        approval_timeout_seconds: 300,
        allowed_tools: [],
        denied_tools: [],
        path_rules: [],
        denied_commands: [],
        sandbox: { mode: 'auto', network: true },
      },
      hooks: {
        session_start: [],
        session_end: [],
        pre_compact: [],
        post_compact: [],
        pre_tool_use: [],
        post_tool_use: [],
      },
      tools: {
        workspace: join(home, '.hob', 'workspace'),
        bash_timeout_seconds: 120,
        web_fetch: { max_bytes: 2_000_000, timeout_seconds: 20 },
        web_search: { provider: 'duckduckgo', timeout_seconds: 15, max_results: 8 },
      },
      gateway: {
        busy_mode: 'steer',
        group_sessions: 'per_user',
        max_queue: 20,
        max_conversations: 500,
        idle_timeout_seconds: 1800,
        pairing_code_ttl_seconds: 3600,
        busy_after_ms: 1000,
      },
      scheduler: { grace_minutes: 10, max_failures: 3, report_timeout_seconds: 300, max_jobs_per_person: 50 },
      agents: { max_parallel: 4, max_turns: 20, timeout_seconds: 300, models: [] },
      tasks: { max_running: 3, timeout_seconds: 1800, max_tokens: 500_000 },
      channels: { console: { enabled: true } },
      memory: { snapshot_chars: 2000, extract: 'rules' },
      mcp: { servers: {}, call_timeout_seconds: 60 },
      plugins: { enabled: [], disabled: [] },
      store: { kind: 'sqlite' },
      cluster: { lease_ms: 15_000 },
    } satisfies HobConfig);
  });

  it('fills the defaults of a hook and of a section that is only partly written', () => {
    const config = load('model:\n  retry: { max_attempts: 2 }\nhooks:\n  post_tool_use:\n    - { type: command, command: ./log.sh }\n');
    expect(config.model.retry).toEqual({ max_attempts: 2, base_delay_ms: 500, max_delay_ms: 30000 });
    expect(config.hooks.post_tool_use).toEqual([
      { type: 'command', command: './log.sh', timeout_seconds: 30, matcher: '*', block_on_failure: false },
    ]);
  });

  it('picks the default model name and endpoint of the chosen provider', () => {
    const config = load('model:\n  provider: openai\n');
    expect(config.model.name).toBe('gpt-4.1-mini');
    expect(config.model.base_url).toBe('https://api.openai.com/v1');
  });

  it('keeps the workspace under data_dir, expanding ~ and resolving relative paths next to the file', () => {
    const home = freshDir();
    const file = writeConfig('data_dir: ./state\n');
    const config = loadHobConfig({ path: file, env: { HOME: home } }).config;
    expect(config.data_dir).toBe(join(file, '..', 'state'));
    expect(config.tools.workspace).toBe(join(file, '..', 'state', 'workspace'));
    expect(load('data_dir: ~/hob-data\n', { HOME: home }).tools.workspace).toBe(join(home, 'hob-data', 'workspace'));
  });

  it('accepts any spelling Intl accepts for the time zone and keeps the canonical one', () => {
    expect(load('timezone: europe/berlin\n').timezone).toBe('Europe/Berlin');
  });

  it('turns the console on only when no other channel is configured, unless told otherwise', () => {
    const telegram = 'channels:\n  telegram:\n    token: "123:abc"\n';
    expect(load(telegram).channels.console.enabled).toBe(false);
    expect(load(`${telegram}  console: { enabled: true }\n`).channels.console.enabled).toBe(true);
    expect(load('channels:\n  console: { enabled: false }\n').channels.console.enabled).toBe(false);
  });
});

describe('environment variables', () => {
  it('uses the ${VAR:-default} fallback when the variable is unset or empty, the variable otherwise', () => {
    const text = 'model:\n  name: ${HOB_MODEL:-claude-haiku-4-5}\n';
    expect(load(text).model.name).toBe('claude-haiku-4-5');
    expect(load(text, { HOB_MODEL: '' }).model.name).toBe('claude-haiku-4-5');
    expect(load(text, { HOB_MODEL: 'claude-opus-4-1' }).model.name).toBe('claude-opus-4-1');
  });

  it('reads variables inside longer strings and leaves $${ as a literal ${', () => {
    const config = load(
      'hooks:\n  pre_tool_use:\n    - type: http\n      url: "https://${HOOK_HOST}/hook"\n' +
        '      headers: { X-Template: "$${NOT_A_VAR}" }\n',
      { HOOK_HOST: 'hooks.example.com' },
    );
    expect(config.hooks.pre_tool_use[0]).toMatchObject({
      url: 'https://hooks.example.com/hook',
      headers: { 'X-Template': '${NOT_A_VAR}' },
    });
  });

  it('falls back to ANTHROPIC_API_KEY or OPENAI_API_KEY when model.api_key is unset', () => {
    const env = { ANTHROPIC_API_KEY: 'sk-ant-env', OPENAI_API_KEY: 'sk-openai-env' };
    expect(load('model:\n  api_key: ${ANTHROPIC_API_KEY}\n', { OPENAI_API_KEY: 'x' }).model.api_key).toBeUndefined();
    expect(load('model:\n  api_key: ${HOB_KEY}\n', env).model.api_key).toBe('sk-ant-env');
    expect(load('model:\n  api_key: ""\n', env).model.api_key).toBe('sk-ant-env');
    expect(load('model:\n  provider: openai\n', env).model.api_key).toBe('sk-openai-env');
    expect(load('model:\n  api_key: sk-file\n', env).model.api_key).toBe('sk-file');
  });
});

describe('requireModelKey', () => {
  it('returns the key when there is one', () => {
    expect(requireModelKey(load('', { ANTHROPIC_API_KEY: 'sk-ant-1' }))).toBe('sk-ant-1');
  });

  it('tells an Anthropic user which variable to set and which file to edit', () => {
    const file = writeConfig('model:\n  provider: anthropic\n');
    const { config, path } = loadHobConfig({ path: file, env: { HOME: freshDir() } });
    expect(() => requireModelKey(config, path)).toThrow(UserFacingError);
    expect(() => requireModelKey(config, path)).toThrow(
      `No model API key. Set ANTHROPIC_API_KEY in the environment, or model.api_key in ${file}.`,
    );
  });

  it('tells an OpenAI-compatible user the variable, the file, and that a keyless server takes any placeholder', () => {
    const config = loadHobConfig({ text: 'model: { provider: openai }', env: { HOME: freshDir() } }).config;
    let message = '';
    try {
      requireModelKey(config);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'No model API key. Set OPENAI_API_KEY in the environment, or model.api_key in ~/.hob/config.yaml. ' +
        'An OpenAI-compatible local server that needs no key accepts any placeholder, e.g. api_key: none.',
    );
  });
});

describe('finding the config file', () => {
  it('reads the file named by HOB_CONFIG', () => {
    const file = writeConfig('log_level: debug\n');
    const loaded = loadHobConfig({ env: { HOME: freshDir(), HOB_CONFIG: file } });
    expect(loaded).toMatchObject({ path: file, config: { log_level: 'debug' } });
  });

  it('prefers an explicit path over HOB_CONFIG', () => {
    const explicit = writeConfig('log_level: warn\n');
    const fromEnv = writeConfig('log_level: debug\n');
    const loaded = loadHobConfig({ path: explicit, env: { HOME: freshDir(), HOB_CONFIG: fromEnv } });
    expect(loaded).toMatchObject({ path: explicit, config: { log_level: 'warn' } });
  });

  it('reads ~/.hob/config.yaml when nothing else is named', () => {
    const home = freshDir();
    const file = writeConfig('log_level: error\n', join(home, '.hob', 'config.yaml'));
    expect(loadHobConfig({ env: { HOME: home } })).toMatchObject({ path: file, config: { log_level: 'error' } });
  });
});

describe('channel settings are normalised for the adapters', () => {
  it('strips a trailing slash from the Telegram api_root', () => {
    const config = load('channels:\n  telegram:\n    token: "123:abc"\n    api_root: http://127.0.0.1:8081/\n');
    expect((config.channels.telegram as TelegramConfig | undefined)?.api_root).toBe('http://127.0.0.1:8081');
  });

  it('turns numeric ids into strings and keeps their order (owners first)', () => {
    const config = load(
      'channels:\n  telegram:\n    token: "123:abc"\n    allow_from: [987654321, "123"]\n    allowed_groups: [-1001234567890]\n',
    );
    expect((config.channels.telegram as TelegramConfig | undefined)?.allow_from).toEqual(['987654321', '123']);
    expect((config.channels.telegram as TelegramConfig | undefined)?.allowed_groups).toEqual(['-1001234567890']);
  });

  it('fills the webhook listener defaults', () => {
    const config = load(
      'channels:\n  telegram:\n    token: "123:abc"\n    webhook: { url: "https://hob.example.com/tg", secret_token: s3cr3t }\n',
    );
    expect((config.channels.telegram as TelegramConfig | undefined)?.webhook).toEqual({
      url: 'https://hob.example.com/tg',
      secret_token: 's3cr3t',
      port: 8443,
      host: '127.0.0.1',
    });
  });

  it('fills Slack and Discord endpoint defaults', () => {
    const config = load(
      'channels:\n  slack: { bot_token: xoxb-1, app_token: xapp-1 }\n  discord: { token: abc, api_url: "https://proxy.example/api/" }\n',
    );
    expect(config.channels.slack).toMatchObject({ api_url: 'https://slack.com/api/', port: 3000 });
    expect((config.channels.discord as DiscordConfig | undefined)?.api_url).toBe('https://proxy.example/api');
  });
});
