/**
 * The chat channels as the composition root hands them on: the registry (adapters/index.ts) is
 * read here, in app.ts and by cli.ts for the channels' terminal commands; the config, the app's
 * tools and prompt, `hob start`, `hob doctor` and the child processes' environment learn of the
 * channels through these helpers. It sits in app/ because the app uses it and the CLI sits above
 * the app: the CLI imports it from here, nothing here imports the CLI.
 */
import { CHANNELS } from '../../adapters/index.js';
import { loadConfig, parseConfig, type LoadConfigOptions, type LoadedConfig } from '../config/load.js';
import type { HobConfig } from '../config/schema.js';
import type { ChannelChatCommand, ChannelModule } from '../gateway/channel-module.js';

export { CHANNELS };

/** A channel the config turns on, with its parsed section. */
export type ConfiguredChannel = { module: ChannelModule; section: unknown };

/** config.yaml (or `options.text`), with a `channels.<name>` section allowed for every registered channel. */
export function loadHobConfig(options: Omit<LoadConfigOptions, 'channels'> = {}): LoadedConfig {
  return loadConfig({ ...options, channels: CHANNELS });
}

/** Config text parsed as hob reads it (every registered channel's section allowed); `file` names it in errors. */
export function parseHobConfig(text: string, options: { file?: string; env?: NodeJS.ProcessEnv } = {}): HobConfig {
  return parseConfig(text, { ...options, channels: CHANNELS });
}

/** The channels whose section the config holds, in registry order. */
export function configuredChannels(config: HobConfig, channels: readonly ChannelModule[] = CHANNELS): ConfiguredChannel[] {
  return channels.flatMap((module) => {
    const section = config.channels[module.name];
    return section === undefined ? [] : [{ module, section }];
  });
}

/** The chat commands the configured channels bring (answered on every platform). */
export function channelChatCommands(config: HobConfig): ChannelChatCommand[] {
  return configuredChannels(config).flatMap(({ module, section }) => module.chatCommands?.(section, { dataDir: config.data_dir }) ?? []);
}

/** How people name a platform ("Telegram"), for the system prompt; undefined for one no channel registers. */
export function channelLabel(platform: string): string | undefined {
  return CHANNELS.find((module) => module.name === platform)?.label;
}

/** Every registered channel's secret variables (names, or prefixes ending in `*`): kept from bash and hooks, configured or not. */
export function channelSecretEnv(): string[] {
  return CHANNELS.flatMap((module) => module.secretEnv);
}
