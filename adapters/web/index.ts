/**
 * The web chat as hob sees it: its config section, who may talk to hob there, how to create
 * the adapter (its server and web.db open only then), its doctor checks, `hob web …` in the
 * terminal and `/web` in an owner's chat on any platform. Listed once in adapters/index.ts.
 */
import type { ChannelModule } from '../../src/gateway/channel-module.js';
import { WEB_CAPABILITIES } from './capabilities.js';
import { webChatCommands, webCli } from './commands.js';
import { webConfigSchema, type WebConfig } from './config.js';

export type { WebConfig };

export const webChannel: ChannelModule<WebConfig> = {
  /** The platform id in session keys (`web:<user id>`) and in `hob pairing … --platform web`. */
  name: 'web',
  label: 'Web',
  configSchema: webConfigSchema,
  capabilities: WEB_CAPABILITIES,
  // No tokens in the environment: sign-in codes and sessions are hashed in data_dir/web/web.db.
  secretEnv: [],
  // The page has no platform limit; the cap keeps its list readable (the adapter applies it too).
  // The allow list's first id is the owner; the web has no groups.
  access: (config) => ({ allowFrom: config.allow_from, allowedGroups: [] }),
  async create(config, context) {
    const { createWebAdapter } = await import('./web-adapter.js');
    return createWebAdapter({ config, dataDir: context.dataDir, logger: context.logger });
  },
  async doctor(config, context) {
    const { checkWeb } = await import('./doctor.js');
    return checkWeb(config, context.fetch);
  },
  cli: webCli,
  chatCommands: webChatCommands,
};
