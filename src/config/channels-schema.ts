/**
 * The channels section. A platform is configured by writing its section; its credentials
 * are then required. The console is on unless some other channel is configured.
 */
import { z } from 'zod';
import { baseUrlWithoutSlash, httpUrl, idList, nonEmptyString, port, secret } from './schema-parts.js';

const TELEGRAM_TOKEN = 'expected a bot token like "123456789:AAE-abc..." from @BotFather';
const WEBHOOK_SECRET = 'expected a secret of 1-256 letters, digits, "_" or "-" (Telegram sends it back on every update)';

const telegramSchema = z.strictObject({
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
});

const slackSchema = z
  .strictObject({
    bot_token: secret('expected a bot token starting with "xoxb-"', /^xoxb-/),
    /** Socket Mode. Either this or signing_secret (HTTP mode) is needed. */
    app_token: secret('expected an app-level token starting with "xapp-"', /^xapp-/).optional(),
    signing_secret: secret().optional(),
    port: port.default(3000),
    /** HTTP mode: the address the events endpoint listens on. */
    host: nonEmptyString.default('0.0.0.0'),
    /** Socket Mode: a socket that brings no ping from Slack for this long is replaced. */
    socket_timeout_seconds: z.number().int().min(5).max(600).default(30),
    // @slack/web-api style: method names are appended directly, so keep exactly one slash.
    api_url: httpUrl.transform((url) => url.replace(/\/*$/, '/')).default('https://slack.com/api/'),
    allow_from: idList,
    allowed_channels: idList,
  })
  .superRefine((slack, ctx) => {
    if (slack.app_token === undefined && slack.signing_secret === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['app_token'],
        message:
          'missing; set app_token (Socket Mode, "xapp-...") or signing_secret and port (HTTP mode)',
        params: { complete: true },
      });
    }
  });

const discordSchema = z.strictObject({
  token: secret('expected a bot token from the Discord developer portal'),
  api_url: baseUrlWithoutSlash.default('https://discord.com/api'),
  allow_from: idList,
  allowed_channels: idList,
  /** Servers where every member may talk to hob (when they mention it); commands are registered there. */
  allowed_guilds: idList,
});

export const channelsSchema = z
  .strictObject({
    console: z.strictObject({ enabled: z.boolean().optional() }).optional(),
    telegram: telegramSchema.optional(),
    slack: slackSchema.optional(),
    discord: discordSchema.optional(),
  })
  .transform(({ console: terminal, ...platforms }) => ({
    console: {
      enabled:
        terminal?.enabled ??
        (platforms.telegram === undefined && platforms.slack === undefined && platforms.discord === undefined),
    },
    ...platforms,
  }))
  .prefault({});

export type TelegramConfig = z.output<typeof telegramSchema>;
export type SlackConfig = z.output<typeof slackSchema>;
export type DiscordConfig = z.output<typeof discordSchema>;
