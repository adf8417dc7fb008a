/**
 * `channels.slack`: the bot token, and either Socket Mode (an app token) or HTTP mode (the
 * signing secret and where to listen), the Web API's address, who may talk to hob. Strict keys.
 */
import { z } from 'zod';
import { httpUrl, idList, nonEmptyString, port, secret } from '../../src/config/schema-parts.js';

export const slackConfigSchema = z.lazy(() =>
  z
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
    }),
);

export type SlackConfig = z.output<typeof slackConfigSchema>;
