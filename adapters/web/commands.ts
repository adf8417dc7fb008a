/**
 * What the web channel adds outside its page: `hob web link | signout | sessions` in the
 * terminal, and `/web` in an owner's direct chat on any platform. Both are plain data plus a
 * `run`; the CLI and the gateway take them from the channel registry and call `run`.
 */
import { UserFacingError } from '../../src/core/errors.js';
import type { ChannelChatCommand, ChannelCli } from '../../src/gateway/channel-module.js';
import type { WebConfig } from './config.js';

// web.db (and with it better-sqlite3) opens only when a command runs: the registry holds these
// commands, and every hob command, `hob start` first, loads the registry before anything else.
const identities = () => import('./identities.js');
const links = () => import('./links.js');

function configured(config: WebConfig | undefined): WebConfig {
  if (!config) throw new UserFacingError('The web chat is not configured: add a channels.web section to your config (channels: { web: { allow_from: ["you"] } }), see the README, Web.');
  return config;
}

const text = (value: string | boolean | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

export const webCli: ChannelCli<WebConfig> = {
  command: 'web',
  description: "the web chat: sign-in links and who is signed in",
  subcommands: [
    {
      name: 'link',
      description: 'print a one-time sign-in link (for you, the first of channels.web.allow_from, or --as ID)',
      options: [
        { flags: '--as <id>', description: 'the web user id to sign in (on allow_from, or signed in here before)' },
        { flags: '--name <name>', description: 'what hob calls them (default: their id, or the name they had)' },
      ],
      run: async (options, context) => {
        const { describeLink, signInLink } = await links();
        context.out(describeLink(signInLink(configured(context.config), context.dataDir, text(options['as']), text(options['name']))));
      },
    },
    {
      name: 'signout',
      description: "end a person's web sessions everywhere (default: yours), or --all",
      options: [
        { flags: '--as <id>', description: 'whose sessions to end' },
        { flags: '--all', description: "everyone's sessions" },
      ],
      run: async (options, context) => {
        const config = configured(context.config);
        const userId = text(options['as']) ?? config.allow_from[0];
        if (options['all'] !== true && userId === undefined) throw new UserFacingError('Say whose sessions to end: hob web signout --as ID (or --all).');
        const { withIdentities } = await identities();
        context.out(
          withIdentities(context.dataDir, (identities) => {
            if (options['all'] === true) return `Ended ${identities.endAllSessions()} web session(s); open pages are signed out within seconds.`;
            const ended = identities.endSessionsOf(userId as string);
            return ended ? `Signed ${userId} out of ${ended} web session(s); open pages are signed out within seconds.` : `${userId} has no web sessions.`;
          }),
        );
      },
    },
    {
      name: 'sessions',
      description: 'who is signed in to the web chat, and when each session was last used',
      options: [],
      run: async (_options, context) => {
        configured(context.config);
        const { withIdentities } = await identities();
        const rows = withIdentities(context.dataDir, (identities) => identities.sessions());
        if (rows.length === 0) return context.out('Nobody is signed in to the web chat.');
        for (const row of rows) context.out(`${row.userId} (${row.name}) · signed in ${when(row.createdAt)} · last used ${when(row.lastSeenAt)}`);
      },
    },
  ],
};

/** `/web [ID]` in an owner's direct chat: a sign-in link for them (or for ID), like `hob web link`. */
export function webChatCommands(config: WebConfig, context: { dataDir: string }): ChannelChatCommand[] {
  return [
    {
      command: 'web',
      description: 'A one-time sign-in link for the web chat (owner)',
      ownerOnly: true,
      directOnly: true,
      run: async (args, where) => {
        if (where.chatType !== 'dm') return '/web answers with a sign-in link, so it works only in a direct chat with me.';
        try {
          const { describeLink, signInLink } = await links();
          return describeLink(signInLink(config, context.dataDir, args.trim().split(/\s+/)[0] || undefined));
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      },
    },
  ];
}

function when(at: number): string {
  return new Date(at).toISOString().slice(0, 16).replace('T', ' ');
}
