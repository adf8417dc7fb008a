/**
 * The registry as hob's parts use it: the config takes each registered channel's section and
 * nothing else, the bash and hook environment drop every channel's secret variables, a
 * channel's terminal commands reach its own section, and `hob pairing revoke` finds the
 * platform from the config.
 */
import '../support/env.js';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../adapters/index.js';
import { addChannelCommands } from '../../src/cli/channel-commands.js';
import { channelSecretEnv, configuredChannels, parseHobConfig } from '../../src/app/channels.js';
import { shadowedChatCommands } from '../../src/cli/shadowed-commands.js';
import { runPairing } from '../../src/cli/pairing.js';
import { parseConfig } from '../../src/config/load.js';
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { withoutSecrets } from '../../src/policy/child-env.js';
import { openDatabase } from '../../src/store/sqlite/db.js';
import { SqlitePairings } from '../../src/store/sqlite/pairings.js';
import { tempDir } from '../support/engine.js';
import { z } from 'zod';

describe('the channel registry', () => {
  it('lists each channel once, by a lowercase name, with a label', () => {
    const names = CHANNELS.map((channel) => channel.name);
    expect(new Set(names).size).toBe(names.length);
    for (const channel of CHANNELS) {
      expect(channel.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(channel.label).not.toBe('');
    }
  });

  it('gives the config a section per registered channel, and "did you mean" for a misspelt one', () => {
    const config = parseHobConfig('channels:\n  telegram: { token: "1:a" }\n  discord: { token: abc }\n', { env: {} });
    expect(configuredChannels(config).map(({ module }) => module.name)).toEqual(['telegram', 'discord']);
    expect(config.channels.console.enabled).toBe(false);
    expect(() => parseHobConfig('channels:\n  telegarm: { token: "1:a" }\n', { env: {} })).toThrow('channels.telegarm: unknown key; did you mean "telegram"?');
    // Without the registry, the config knows no chat channel at all: nothing is built in.
    expect(() => parseConfig('channels:\n  telegram: { token: "1:a" }\n', { env: {} })).toThrow('channels.telegram: unknown key');
  });

  it("keeps every channel's secret variables out of bash and hooks, configured or not", () => {
    const env = { PATH: '/usr/bin', TELEGRAM_API_ROOT: 'http://127.0.0.1:8081', SLACK_TEAM: 'T1', Discord_Guild: 'g' };
    expect(withoutSecrets(env)).toEqual(env);
    expect(withoutSecrets(env, channelSecretEnv())).toEqual({ PATH: '/usr/bin' });
    expect(withoutSecrets({ PATH: '/bin', CHAT_ID: '1', CHATTY: 'x' }, ['CHAT_*', 'CHATTY'])).toEqual({ PATH: '/bin' });
  });
});

describe("a channel's terminal commands", () => {
  it('are listed by `hob --help` of the built CLI, which reads no config for it', () => {
    // A config that does not parse: --help must not read it (it takes the commands from the registry alone).
    const dir = tempDir();
    const broken = join(dir, 'config.yaml');
    writeFileSync(broken, 'model: [not, a, map\n');
    const help = spawnSync(process.execPath, [join(import.meta.dirname, '../../dist/cli.js'), '--config', broken, '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(help.status).toBe(0);
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const listed = CHANNELS.filter((channel) => channel.cli);
    expect(listed.length).toBeGreaterThan(0);
    for (const { cli } of listed) if (cli) expect(help.stdout).toMatch(new RegExp(`^  ${escape(cli.command)} +${escape(cli.description.slice(0, 20))}`, 'm'));
  });

  it('runs a subcommand with its options and the channel\'s own config section', async () => {
    const runs: unknown[] = [];
    const demo: ChannelModule<{ greeting: string }> = {
      ...(CHANNELS[0] as ChannelModule<never>),
      name: 'demo',
      configSchema: z.strictObject({ greeting: z.string() }),
      cli: {
        command: 'demo',
        description: 'the demo channel',
        subcommands: [{ name: 'link', description: 'print a link', options: [{ flags: '--as <id>', description: 'for whom' }], run: async (options, context) => void runs.push({ options, config: context.config, dataDir: context.dataDir }) }],
      },
    };
    const program = new Command().exitOverride();
    const loaded = { config: parseConfig('data_dir: /tmp/hob-demo\nchannels:\n  demo: { greeting: hi }\n', { env: {}, channels: [demo] }), path: undefined };
    addChannelCommands(program, [demo], async () => loaded);
    await program.parseAsync(['demo', 'link', '--as', 'ann'], { from: 'user' });
    expect(runs).toEqual([{ options: { as: 'ann' }, config: { greeting: 'hi' }, dataDir: '/tmp/hob-demo' }]);
  });
});

describe("a channel's chat commands", () => {
  it("names each one that hob's own command of the same name hides, for hob start to warn", () => {
    const command = (name: string) => ({ command: name, description: name, ownerOnly: false, directOnly: false, run: async () => name });
    const demo: ChannelModule<{ greeting: string }> = {
      ...(CHANNELS[0] as ChannelModule<never>),
      name: 'demo',
      label: 'Demo',
      configSchema: z.strictObject({ greeting: z.string() }),
      chatCommands: () => [command('new'), command('greet')],
    };
    const config = parseConfig('channels:\n  demo: { greeting: hi }\n', { env: {}, channels: [demo] });
    expect(shadowedChatCommands(config, [demo])).toEqual(["Demo's chat command /new is hidden by hob's own /new, which answers instead; the channel needs to name it differently."]);
    // The registered channels bring none that hob's hide.
    expect(shadowedChatCommands(parseHobConfig('channels:\n  web: { port: 8080 }\n', { env: {} }))).toEqual([]);
  });
});

describe('hob pairing revoke', () => {
  function pairedDir(): string {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'hob.db'));
    const pairings = new SqlitePairings(db);
    pairings.insert({ code: 'ABCD2345', platform: 'slack', userId: 'U300', userName: 'Eve', chatId: 'D300', createdAt: Date.now(), expiresAt: Date.now() + 60_000 });
    pairings.approve('ABCD2345', 'cli', Date.now());
    db.close();
    return dir;
  }
  const sink = () => {
    let text = '';
    return { stream: new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) }), text: () => text };
  };

  it('takes the one configured chat channel when --platform is not given', () => {
    const dir = pairedDir();
    const config = parseHobConfig(`data_dir: ${dir}\nchannels:\n  slack: { bot_token: xoxb-1, app_token: xapp-1 }\n`, { env: {} });
    const out = sink();
    runPairing(config, 'revoke', 'U300', undefined, out.stream);
    expect(out.text()).toBe('Revoked slack user U300.\n');
  });

  it('asks which platform when more than one chat channel is configured', () => {
    const dir = pairedDir();
    const config = parseHobConfig(`data_dir: ${dir}\nchannels:\n  slack: { bot_token: xoxb-1, app_token: xapp-1 }\n  discord: { token: abc }\n`, { env: {} });
    expect(() => runPairing(config, 'revoke', 'U300', undefined, sink().stream)).toThrow('Which platform is the user on? Add --platform slack|discord.');
    const out = sink();
    runPairing(config, 'revoke', 'U300', 'slack', out.stream);
    expect(out.text()).toBe('Revoked slack user U300.\n');
  });
});
