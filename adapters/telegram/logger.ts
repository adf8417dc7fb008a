import { stderrLoggerOf, type AdapterLogger } from '../logger.js';

export type TelegramLogger = AdapterLogger;

export const stderrLogger = stderrLoggerOf('telegram');
