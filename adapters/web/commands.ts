/**
 * What the web channel adds outside its page: `hob web link | signout | sessions` in the
 * terminal, and `/web` in an owner's direct chat on any platform. Both are plain data plus a
 * `run`; the CLI and the gateway list them from the channel registry and call `run`.
 */
import { UserFacingError } from '../../src/core/errors.js';
import type { ChatType } from '../../src/gateway/channel.js';
import type { WebConfig } from './config.js';
import { withIdentities } from './identities.js';
import { describeLink, signInLink } from './links.js';

/** What a channel's terminal command is run with. */
export type ChannelCliContext = {
  /** The channel's parsed config section; undefined when the config has none. */
  config: WebConfig | undefined;
  dataDir: string;
  /** Writes to stdout (a line per call, newline added). */
  out(line: string): void;
};

/** `hob <command> <name> [options]`: one subcommand of a channel's terminal command. */
export type ChannelCliCommand = {
  name: string;
  description: string;
  /** Commander-style flags, e.g. `--as <id>`; values arrive in `run`'s options by their long name. */
  options: { flags: string; description: string }[];
  /** Throws UserFacingError for a mistake the person can fix (the CLI prints it and exits 1). */
  run(options: Record<string, string | boolean | undefined>, context: ChannelCliContext): Promise<void>;
};

/** A slash command a channel module answers in any platform's chat. */
export type ChannelChatCommand = {
  command: string;
  description: string;
  /** Only an owner of the platform it is sent on may run it (the gateway refuses others, as for its own). */
  ownerOnly: boolean;
  /** Answers with a secret, so only in a direct chat (checked by the gateway and again by `run`). */
  directOnly: boolean;
  /** The reply (plain text). Must not throw: failures come back as words. */
  run(args: string, context: { platform: string; userId: string; chatType: ChatType }): Promise<string>;
};

function configured(config: WebConfig | undefined): WebConfig {
  if (!config) throw new UserFacingError('The web chat is not configured: add a channels.web section to your config (channels: { web: { allow_from: ["you"] } }), see the README, Web.');
  return config;
}

const text = (value: string | boolean | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

export const webCli: { command: string; description: string; subcommands: ChannelCliCommand[] } = {
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
