import { LogLevel, type Logger } from '@slack/bolt';

/** The slice of a pino logger the adapter uses; hob passes its own, tests a recording one. */
export type SlackLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

/** Without a logger, problems still reach stderr: a silently dead socket is the worst outcome. */
export const stderrLogger: SlackLogger = {
  info: () => {},
  warn: (fields, message) => console.error(`[slack] ${message}`, fields),
  error: (fields, message) => console.error(`[slack] ${message}`, fields),
};

/**
 * Bolt's and the socket client's own log lines, into hob's logger: warnings and errors only
 * (reconnects, refused calls), never debug payloads.
 */
export function boltLogger(logger: SlackLogger): Logger {
  const line = (args: unknown[]) => args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
  let level = LogLevel.WARN;
  return {
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => logger.warn({ source: 'bolt' }, line(args)),
    error: (...args: unknown[]) => logger.error({ source: 'bolt' }, line(args)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
