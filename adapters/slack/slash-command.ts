/** The fields of a `/hob` slash command payload hob reads. */
export type SlashCommand = { text: string; user_id: string; user_name: string; channel_id: string; trigger_id: string };

export type ParsedSlashCommand = { kind: 'command'; text: string } | { kind: 'unknown'; help: string };

/**
 * `/hob new`, `/hob approve ID`… → the gateway's own command text (`/new`, `/approve ID`).
 * Bare `/hob` is `/help`. The subcommands are the commands the gateway registered, so later
 * features add theirs without touching the adapter; anything else gets the list.
 */
export function slashCommandText(text: string, known: ReadonlySet<string>): ParsedSlashCommand {
  const [first = 'help', ...rest] = text.trim().split(/\s+/).filter((word) => word !== '');
  const name = first.replace(/^\//, '').toLowerCase();
  if (known.has(name)) return { kind: 'command', text: `/${name}${rest.length ? ` ${rest.join(' ')}` : ''}` };
  const list = [...known].sort().map((command) => `/hob ${command}`).join(', ');
  return { kind: 'unknown', help: `I don't know "/hob ${first}". Try one of: ${list || '/hob help'}.` };
}

/**
 * `/hob` subcommands about the person, not a conversation: they work the same from any
 * channel. The rest act on a conversation (a thread, in a channel), which a slash command
 * cannot name.
 */
const ABOUT_THE_PERSON = new Set(['help', 'start', 'approve', 'deny', 'model', 'pairing', 'permissions', 'memory', 'remember', 'forget', 'settings', 'link', 'unlink', 'sessions', 'mcp']);

/**
 * In a channel, where to use a command about a conversation instead (Slack does not say which
 * thread a slash command came from: acting on a guessed conversation, or answering at the top
 * of the channel, would be wrong); undefined when the command may run here.
 */
export function channelCommandPointer(commandText: string, botName: string): string | undefined {
  const name = /^\/(\S+)/.exec(commandText)?.[1] ?? '';
  if (ABOUT_THE_PERSON.has(name)) return undefined;
  return `In a channel Slack does not tell me which thread \`/hob ${name}\` came from. Write \`@${botName} /${name}\` in the thread instead, or use \`/hob ${name}\` in your DM with me.`;
}
