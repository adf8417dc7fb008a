/** The slice of a pino logger the adapter uses; hob passes its own, tests a recording one. */
export type TelegramLogger = {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
};

/** Without a logger, problems still reach stderr: a silently dead poller is the worst outcome. */
export const stderrLogger: TelegramLogger = {
  info: () => {},
  warn: (fields, message) => console.error(`[telegram] ${message}`, fields),
  error: (fields, message) => console.error(`[telegram] ${message}`, fields),
};
