import { LogLevel, type Logger } from '@slack/bolt';
import { stderrLoggerOf, type AdapterLogger } from '../logger.js';

export type SlackLogger = AdapterLogger;

export const stderrLogger = stderrLoggerOf('slack');

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
