/**
 * Recognising a plain `hob start` before commander loads (cli.ts): the command a service
 * manager runs, and the one the process tests spawn, starts without commander and every other
 * command's definition.
 */

/** What a plain `hob start` names: the config file (`--config`/`-c`), if any. */
export type PlainStart = { config: string | undefined };

/**
 * `args` (hob's arguments, without node and the script) when they are exactly `start`, with at
 * most one `--config <file>`, `--config=<file>` or `-c <file>` before it; undefined for anything
 * else (another command, `start --help`, a flag commander should judge), which commander parses.
 */
export function plainStart(args: readonly string[]): PlainStart | undefined {
  if (args.at(-1) !== 'start') return undefined;
  const before = args.slice(0, -1);
  if (before.length === 0) return { config: undefined };
  if (before.length === 1) {
    const [flag] = before as [string];
    return flag.startsWith('--config=') && flag.length > '--config='.length ? { config: flag.slice('--config='.length) } : undefined;
  }
  if (before.length === 2) {
    const [flag, value] = before as [string, string];
    // A value that looks like a flag is left to commander, which has its own rules for it.
    if ((flag === '--config' || flag === '-c') && value !== '' && !value.startsWith('-')) return { config: value };
  }
  return undefined;
}
