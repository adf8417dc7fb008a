import type { ChannelLogger } from '../src/gateway/channel-module.js';

/** The slice of a pino logger a channel adapter uses; hob passes its own, tests a recording one. */
export type AdapterLogger = ChannelLogger;

/** Without a logger, problems still reach stderr (tagged `[platform]`): a silently dead connection is the worst outcome. */
export function stderrLoggerOf(platform: string): AdapterLogger {
  return {
    info: () => {},
    warn: (fields, message) => console.error(`[${platform}] ${message}`, fields),
    error: (fields, message) => console.error(`[${platform}] ${message}`, fields),
  };
}
