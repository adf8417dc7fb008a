/**
 * `channels.web`: where the chat page is served and who is on the allow list. Strict keys;
 * every problem names the key and the fix (the config loader turns these issues into lines).
 */
import { z } from 'zod';
import { httpUrl, nonEmptyString, platformId, port } from '../../src/config/schema-parts.js';

/** A web person's id: it appears in session keys (`web:<id>`), links and `hob pairing` output. */
export const WEB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const WEB_ID = 'expected a web user id: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "ann")';

const webId = z.lazy(() => platformId.pipe(z.string().regex(WEB_ID_PATTERN, { error: WEB_ID })));

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export const webConfigSchema = z.lazy(() =>
  z
    .strictObject({
      /** The port the page is served on. */
      port: port.default(8377),
      /** The address to listen on: this machine only by default. */
      host: nonEmptyString.default('127.0.0.1'),
      /**
       * How people reach the page when that is not `http://host:port` (a TLS proxy in front:
       * `https://hob.example.com`). Sign-in links use it; its origin is accepted; https makes
       * the session cookie Secure.
       */
      public_url: httpUrl
        .transform((url) => url.replace(/\/+$/, ''))
        .refine((url) => new URL(url).pathname === '/' && !new URL(url).search, { error: 'expected the page\'s origin only, like "https://hob.example.com" (the page is served at the root; no path)' })
        .optional(),
      /** Web user ids, owners first: `hob web link` signs in the first one unless told `--as`. */
      allow_from: z.array(webId).default(() => []),
      /** A session cookie lasts this many days after its last use. */
      session_days: z.number({ error: 'expected a whole number of days from 1 to 365' }).int({ error: 'expected a whole number of days from 1 to 365' }).min(1, { error: 'expected a whole number of days from 1 to 365' }).max(365, { error: 'expected a whole number of days from 1 to 365' }).default(30),
    })
    .superRefine((web, ctx) => {
      if (!isLoopback(web.host) && web.public_url === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['public_url'],
          message: `missing: host ${web.host} serves the page beyond this machine, so say how people reach it (behind a TLS proxy: public_url: "https://hob.example.com"), or keep host: 127.0.0.1`,
          params: { complete: true },
        });
      }
    }),
);

export type WebConfig = z.output<typeof webConfigSchema>;

/** Where the page lives and what requests may claim to come from. */
export type WebSite = {
  /** The page's URL without a trailing slash (what sign-in links start with). */
  baseUrl: string;
  /** Origins a state-changing request or an event stream may come from. */
  origins: ReadonlySet<string>;
  /** Host headers the server answers (anything else is DNS rebinding or a stray client). */
  hosts: ReadonlySet<string>;
  /** The page is reached over https: the cookie is Secure (and `__Host-` prefixed). */
  secure: boolean;
};

/**
 * The site for a config, with the port actually bound (tests bind port 0). With `public_url`
 * only its origin is accepted (the page is used there); the Host may still be the bound
 * address, as a proxy forwards it unless told otherwise.
 */
export function siteOf(config: Pick<WebConfig, 'host' | 'public_url'>, boundPort: number): WebSite {
  const hostInUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  const direct = isWildcard(config.host) ? [] : [`http://${hostInUrl}:${boundPort}`];
  const loopback = isLoopback(config.host) ? ['127.0.0.1', 'localhost', '[::1]'].map((host) => `http://${host}:${boundPort}`) : [];
  const served = [...direct, ...loopback].map((url) => new URL(url));
  const publicUrl = config.public_url ? new URL(config.public_url) : undefined;
  const baseUrl = config.public_url ?? direct[0] ?? `http://127.0.0.1:${boundPort}`;
  return {
    baseUrl,
    origins: new Set(publicUrl ? [publicUrl.origin] : served.map((url) => url.origin)),
    hosts: new Set([...(publicUrl ? [publicUrl.host] : []), ...served.map((url) => url.host)]),
    secure: baseUrl.startsWith('https:'),
  };
}

function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}
