/**
 * The web chat as one channel module: everything hob's CLI, config, gateway and doctor need to
 * know about it, so that adding it to hob is one line in the channel registry.
 */
import type { ChannelAccess } from '../../src/gateway/access.js';
import type { AdapterLogger } from '../logger.js';
import { webChatCommands, webCli } from './commands.js';
import { webConfigSchema, type WebConfig } from './config.js';
import { checkWeb } from './doctor.js';
import { MAX_COMMANDS } from './capabilities.js';
import { createWebAdapter, type WebAdapter } from './web-adapter.js';

export type { ChannelChatCommand, ChannelCliCommand, ChannelCliContext } from './commands.js';
export type { WebConfig } from './config.js';
export type { WebAdapter } from './web-adapter.js';

export const webChannel = {
  /** The platform id in session keys (`web:<user id>`) and in `hob pairing … --platform web`. */
  name: 'web',
  label: 'Web',
  /** `channels.web`; strict keys. */
  configSchema: webConfigSchema,
  /** No tokens in the environment: sign-in codes and sessions are hashed in data_dir/web/web.db. */
  secretEnv: [] as string[],
  /** The allow list's first id is the owner; the web has no groups. */
  access: (config: WebConfig): ChannelAccess => ({ allowFrom: config.allow_from, allowedGroups: [] }),
  /** The adapter; it binds its port on `start`. */
  create: async (config: WebConfig, context: { logger: AdapterLogger; dataDir: string }): Promise<WebAdapter> =>
    createWebAdapter({ config, dataDir: context.dataDir, logger: context.logger }),
  doctor: (config: WebConfig) => checkWeb(config),
  /** The page has no platform limit; the cap keeps its list readable (the adapter applies it too). */
  menu: { maxCommands: MAX_COMMANDS },
  /** `hob web link | signout | sessions`. */
  cli: webCli,
  /** `/web`, answered in an owner's direct chat on any platform. */
  chatCommands: webChatCommands,
};
