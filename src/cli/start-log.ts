import type { ChannelLogger } from '../gateway/channel-module.js';
import type { Logger } from '../logger.js';

type Level = 'info' | 'warn' | 'error';
type Line = { level: Level; bindings: Record<string, unknown>; fields: Record<string, unknown>; message: string };

/**
 * `hob start`'s log while pino is not loaded yet. The channels connect first, with the config
 * read, and pino (its module, its redaction rules, the file) loads with the rest of hob once
 * they are under way, instead of before the first of them could start. A line written before
 * then waits, in order, and is written to the log the moment it is there (its `time` is that
 * moment, a second late at most).
 */
export class StartLog {
  private logger: Logger | undefined;
  private readonly waiting: Line[] = [];
  private readonly children = new Map<string, Logger>();

  /** What a channel logs through: tagged with its platform, as pino's `child({ platform })`. */
  forChannel(platform: string): ChannelLogger {
    const write = (level: Level) => (fields: Record<string, unknown>, message: string) => this.write(level, { platform }, fields, message);
    return { info: write('info'), warn: write('warn'), error: write('error') };
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.write('error', {}, fields, message);
  }

  /** The log is there: what waited is written to it now, everything after at once. */
  attach(logger: Logger): Logger {
    this.logger = logger;
    for (const { level, bindings, fields, message } of this.waiting.splice(0)) this.target(logger, bindings)[level](fields, message);
    return logger;
  }

  private write(level: Level, bindings: Record<string, unknown>, fields: Record<string, unknown>, message: string): void {
    if (this.logger) this.target(this.logger, bindings)[level](fields, message);
    else this.waiting.push({ level, bindings, fields, message });
  }

  private target(logger: Logger, bindings: Record<string, unknown>): Logger {
    const platform = bindings['platform'];
    if (typeof platform !== 'string') return logger;
    let child = this.children.get(platform);
    if (!child) this.children.set(platform, (child = logger.child({ platform })));
    return child;
  }
}
