import type { IncomingMessage } from 'node:http';
import type { Attachment, InboundMessage, InboundSink } from '../../src/gateway/channel.js';
import type { AdapterLogger } from '../logger.js';
import type { ChatLog } from './chat-log.js';
import type { WebSite } from './config.js';
import type { EventHub } from './event-hub.js';
import { cookieName, HttpError, readCookie } from './http-guard.js';
import type { WebIdentities, WebPerson } from './identities.js';
import type { PageEvent } from './page-events.js';

/** What the API handlers work with: the adapter's state, seen from the HTTP side. */
export type WebApiContext = {
  site: WebSite;
  sessionDays: number;
  identities: WebIdentities;
  chat: ChatLog;
  hub: EventHub;
  logger: AdapterLogger;
  /** The gateway's sink while the channel runs. */
  sink(): InboundSink | undefined;
  /** A chat as a page opening now sees it (stored messages, live ones, the person's menu). */
  snapshot(person: WebPerson): PageEvent;
  /** Ids a visitor may never be given (the allow list's). */
  reserved(id: string): boolean;
  /** Limits on what strangers can make hob do (sign-in attempts, access requests). */
  limits: { signIn: RateLimit; access: RateLimit };
};

export type SignedIn = { person: WebPerson; tokenHash: string };

export const NOT_SIGNED_IN = 'You are not signed in, or your session has ended. Open a new sign-in link: run `hob web link` where hob runs, or send /web to hob in your chat.';

/** The person behind the request's session cookie; 401 for a missing, forged, ended or expired one. */
export function signedIn(req: IncomingMessage, context: WebApiContext): SignedIn {
  const token = readCookie(req, cookieName(context.site));
  const session = token ? context.identities.session(token, context.sessionDays) : undefined;
  if (!session) throw new HttpError(401, NOT_SIGNED_IN);
  return session;
}

/** What a page's person says, as the gateway takes it: a web chat is always its person's own, direct one. */
export function inboundOf(person: WebPerson, message: { text: string; attachments: Attachment[]; messageId: string; updateId: string }): InboundMessage {
  return { platform: 'web', chatId: person.id, userId: person.id, userName: person.name, chatType: 'dm', mentionsBot: false, replyToBot: false, ...message };
}

/** At most `max` events per `windowMs`, for everyone together (these paths need no speed, only a ceiling). */
export class RateLimit {
  private readonly times: number[] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event; false when the ceiling is reached (the event is not counted then). */
  take(): boolean {
    const now = this.now();
    while (this.times.length && (this.times[0] as number) <= now - this.windowMs) this.times.shift();
    if (this.times.length >= this.max) return false;
    this.times.push(now);
    return true;
  }
}
