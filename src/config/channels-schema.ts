/**
 * The channels section. Each chat channel brings the schema of its own section (its module in
 * adapters/<name>/ does); writing the section turns the channel on, and its credentials are
 * then required. The console is on unless some chat channel is configured.
 */
import { z } from 'zod';

/** What the config needs of a channel: its key under `channels`, and its section's schema. */
export type ChannelSection = { readonly name: string; readonly configSchema: z.ZodType<unknown> };

/** `channels` once parsed: the console's switch, and each configured channel's section by name. */
export type ChannelsConfig = { console: { enabled: boolean } } & { readonly [name: string]: unknown };

const consoleSchema = z.strictObject({ enabled: z.boolean().optional() });

/** The channels section for these channels (none: the console only). */
export function channelsSchemaFor(channels: readonly ChannelSection[]) {
  const names = new Set<string>();
  for (const { name } of channels) {
    // A registry mistake, not a config one: it fails every start, so it shows at once.
    if (name === 'console' || names.has(name) || !/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`channel name "${name}" is taken or not a lowercase word`);
    names.add(name);
  }
  const sections = Object.fromEntries(channels.map((channel) => [channel.name, channel.configSchema.optional()]));
  return z
    .strictObject({ console: consoleSchema.optional(), ...sections })
    .transform(({ console: terminal, ...configured }): ChannelsConfig => ({
      console: { enabled: terminal?.enabled ?? Object.values(configured).every((section) => section === undefined) },
      ...configured,
    }))
    .prefault({});
}
