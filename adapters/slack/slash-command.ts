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
