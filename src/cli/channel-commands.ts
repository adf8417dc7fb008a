/**
 * Terminal commands the chat channels bring (`hob <command> <subcommand> [options]`), added to
 * hob's command line from each module's `cli`. A channel's command gets its own config section
 * (undefined when the config has none: the command then says what to add).
 */
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load.js';
import type { ChannelModule } from '../gateway/channel-module.js';

export function addChannelCommands(program: Command, channels: readonly ChannelModule[], readConfig: () => Promise<LoadedConfig>): void {
  for (const module of channels) {
    const cli = module.cli;
    if (!cli) continue;
    const command = program.command(cli.command).description(cli.description);
    for (const sub of cli.subcommands) {
      const subcommand = command.command(sub.name).description(sub.description);
      for (const option of sub.options) subcommand.option(option.flags, option.description);
      subcommand.action(async (options: Record<string, string | boolean | undefined>) => {
        const { config } = await readConfig();
        await sub.run(options, { config: config.channels[module.name], dataDir: config.data_dir, out: (line) => process.stdout.write(`${line}\n`) });
      });
    }
  }
}
