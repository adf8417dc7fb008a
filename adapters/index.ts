/**
 * The registry: every chat channel hob knows, one line each. The CLI reads this list and hands
 * it to the config (which sections `channels` may hold), `hob start` (which adapters to create,
 * who may talk to hob), `hob doctor`, the system prompt's platform names and the child
 * processes' environment (which variables are secrets). Adding a channel is its folder
 * (adapters/<name>/index.ts exporting a ChannelModule) and a line here.
 *
 * Each module is light (its config schema, capabilities and a few functions); its SDK and
 * adapter load only when the config names the channel.
 */
import type { ChannelModule } from '../src/gateway/channel-module.js';
import { discordChannel } from './discord/index.js';
import { slackChannel } from './slack/index.js';
import { telegramChannel } from './telegram/index.js';
import { webChannel } from './web/index.js';

export const CHANNELS: readonly ChannelModule[] = [telegramChannel, slackChannel, discordChannel, webChannel];
