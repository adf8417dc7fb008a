/**
 * `channels.telegram`: the bot token, where the Bot API is, who may talk to hob, and the
 * optional webhook (long polling otherwise). Strict keys; messages as the rest of the config.
 */
import { z } from 'zod';
import { baseUrlWithoutSlash, httpUrl, idList, nonEmptyString, port, secret } from '../../src/config/schema-parts.js';

const TELEGRAM_TOKEN = 'expected a bot token like "123456789:AAE-abc..." from @BotFather';
const WEBHOOK_SECRET = 'expected a secret of 1-256 letters, digits, "_" or "-" (Telegram sends it back on every update)';

export const telegramConfigSchema = z.lazy(() =>
  z.strictObject({
    token: secret(TELEGRAM_TOKEN, /^\d+:[A-Za-z0-9_-]+$/),
    /** grammY appends "/bot<token>/method"; a trailing slash would break every call. */
    api_root: baseUrlWithoutSlash.default('https://api.telegram.org'),
    /** Owners first: the first entry may approve for anyone. */
    allow_from: idList,
    /** Group chats where everyone may talk to hob. */
    allowed_groups: idList,
    webhook: z
      .strictObject({
        url: httpUrl,
        secret_token: secret(WEBHOOK_SECRET, /^[A-Za-z0-9_-]{1,256}$/),
        port: port.default(8443),
        host: nonEmptyString.default('127.0.0.1'),
      })
      .optional(),
  }),
);

export type TelegramConfig = z.output<typeof telegramConfigSchema>;
