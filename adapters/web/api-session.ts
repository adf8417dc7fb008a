/**
 * Signing in and out. A sign-in link's code (in the URL's fragment, so it never reaches a log
 * or a Referer) is posted by the page once; the answer sets the session cookie. A visitor
 * without a link may ask for access: they get a visitor id and a session, and hob's gateway
 * answers them as it answers any unknown person (a pairing code an owner approves).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inboundOf, signedIn, type WebApiContext } from './api-context.js';
import { clearedCookie, cookieName, HttpError, readCookie, readJson, sendJson, sessionCookie } from './http-guard.js';
import { cleanName, hashSecret, type WebPerson } from './identities.js';

export const USED_LINK = 'This sign-in link was already used or has expired (a link works once, for 10 minutes). Ask for a new one: `hob web link` where hob runs, or /web in your chat with hob.';

export async function signIn(req: IncomingMessage, res: ServerResponse, context: WebApiContext): Promise<void> {
  const body = await readJson(req);
  const code = body['code'];
  if (typeof code !== 'string' || !/^[A-Za-z0-9_-]{16,64}$/.test(code)) throw new HttpError(400, 'That is not a sign-in code; open the whole link hob printed.');
  if (!context.limits.signIn.take()) throw new HttpError(429, 'Too many sign-in attempts just now; wait a minute and open the link again.');
  const userId = context.identities.redeemCode(code);
  if (userId === undefined) {
    context.logger.warn({}, 'a web sign-in with a used, expired or unknown code was refused');
    throw new HttpError(401, USED_LINK);
  }
  endCurrentSession(req, context);
  const person = context.identities.person(userId) ?? context.identities.savePerson(userId, userId);
  startSession(res, person, context);
  context.logger.info({ user: person.id }, 'signed in to the web chat');
}

export async function askForAccess(req: IncomingMessage, res: ServerResponse, context: WebApiContext): Promise<void> {
  const body = await readJson(req);
  const name = typeof body['name'] === 'string' ? cleanName(body['name']) : '';
  if (name === '') throw new HttpError(400, 'Tell hob your name (1 to 64 characters) to ask for access.');
  const sink = context.sink();
  if (!sink) throw new HttpError(503, 'hob is not running its chats right now; try again in a moment.');
  if (!context.limits.access.take()) throw new HttpError(429, 'Too many people asked for access in the last minutes; try again in a few minutes.');
  endCurrentSession(req, context);
  const person = context.identities.newVisitor(name, context.reserved);
  startSession(res, person, context);
  context.logger.info({ user: person.id }, 'a visitor asked for access to the web chat');
  // Their first word to hob: the gateway answers an unknown person with a pairing code and
  // tells the owners. Not shown in the chat: the person pressed a button, they did not write it.
  sink.message(inboundOf(person, { text: '/start', attachments: [], messageId: `access-${person.id}`, updateId: `access-${person.id}` }));
}

export function signOut(req: IncomingMessage, res: ServerResponse, context: WebApiContext): void {
  const { tokenHash } = signedIn(req, context);
  context.identities.endSession(tokenHash);
  context.hub.endSession(tokenHash);
  res.writeHead(204, { 'Set-Cookie': clearedCookie(context.site), 'Cache-Control': 'no-store' });
  res.end();
}

export function me(req: IncomingMessage, res: ServerResponse, context: WebApiContext): void {
  sendJson(res, 200, { me: signedIn(req, context).person });
}

function startSession(res: ServerResponse, person: WebPerson, context: WebApiContext): void {
  const { token, maxAgeSeconds } = context.identities.startSession(person.id, context.sessionDays);
  sendJson(res, 200, { me: person }, { 'Set-Cookie': sessionCookie(context.site, token, maxAgeSeconds) });
}

/** Signing in on top of a session ends that one: a browser holds one person at a time. */
function endCurrentSession(req: IncomingMessage, context: WebApiContext): void {
  const token = readCookie(req, cookieName(context.site));
  if (token === undefined) return;
  const tokenHash = hashSecret(token);
  context.identities.endSession(tokenHash);
  context.hub.endSession(tokenHash);
}
