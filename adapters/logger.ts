/** The slice of a pino logger a channel adapter uses; hob passes its own, tests a recording one. */
export type AdapterLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

/** Without a logger, problems still reach stderr (tagged `[platform]`): a silently dead connection is the worst outcome. */
export function stderrLoggerOf(platform: string): AdapterLogger {
  return {
    info: () => {},
    warn: (fields, message) => console.error(`[${platform}] ${message}`, fields),
    error: (fields, message) => console.error(`[${platform}] ${message}`, fields),
  };
}
