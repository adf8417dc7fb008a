/**
 * Chat commands a channel brings under the name of one of hob's own. Apart from the registry
 * (app/channels.ts) because hob's commands bring memory, sessions and tasks with them, which
 * `hob start` loads only once its channels are connecting.
 */
import type { HobConfig } from '../config/schema.js';
import type { ChannelModule } from '../gateway/channel-module.js';
import { COMMAND_NAMES } from '../gateway/commands.js';
import { CHANNELS, configuredChannels } from '../app/channels.js';

/** A sentence for each chat command a configured channel brings under the name of one of hob's own: hob answers its own, so the channel's is never reached. `hob start` prints them. */
export function shadowedChatCommands(config: HobConfig, channels: readonly ChannelModule[] = CHANNELS): string[] {
  return configuredChannels(config, channels).flatMap(({ module, section }) =>
    (module.chatCommands?.(section, { dataDir: config.data_dir }) ?? [])
      .filter((command) => COMMAND_NAMES.has(command.command))
      .map((command) => `${module.label}'s chat command /${command.command} is hidden by hob's own /${command.command}, which answers instead; the channel needs to name it differently.`),
  );
}
