/**
 * Sign-in links, the one way into the web chat for people on the allow list. Made by
 * `hob web link` (its own process) or `/web` in an owner's chat, both through web.db in
 * data_dir, where the running server finds the code when the link is opened.
 */
import { UserFacingError } from '../../src/core/errors.js';
import { siteOf, type WebConfig } from './config.js';
import { CODE_TTL_MS, withIdentities, type WebPerson } from './identities.js';

export type SignInLink = { url: string; person: WebPerson; expiresAt: number };

/**
 * A one-time link for `as` (default: the owner, the allow list's first id). Only ids on the
 * allow list, or people who signed in here before (a paired visitor on a new browser), get one.
 * `name` gives the person the name hob calls them (approvals say "allowed once by …").
 */
export function signInLink(config: Pick<WebConfig, 'host' | 'port' | 'public_url' | 'allow_from'>, dataDir: string, as?: string, name?: string): SignInLink {
  const userId = as ?? config.allow_from[0];
  if (userId === undefined) {
    throw new UserFacingError('channels.web.allow_from is empty, so there is no owner to sign in: put your own web id first (e.g. allow_from: ["ann"]; the first entry is the owner), then run hob web link again.');
  }
  return withIdentities(dataDir, (identities) => {
    const known = identities.person(userId);
    if (!known && !config.allow_from.includes(userId)) {
      throw new UserFacingError(`${userId} is not on channels.web.allow_from and has never signed in here: add them to allow_from, or let them ask for access on the page (an owner approves their pairing code).`);
    }
    const person = name !== undefined || !known ? identities.savePerson(userId, name ?? userId) : known;
    const { code, expiresAt } = identities.issueCode(userId, CODE_TTL_MS);
    return { url: `${siteOf(config, config.port).baseUrl}/#code=${code}`, person, expiresAt };
  });
}

/** The words around a link, the same from the terminal and from a chat. */
export function describeLink(link: SignInLink): string {
  const who = link.person.name === link.person.id ? link.person.id : `${link.person.name} (${link.person.id})`;
  return [`Sign-in link for ${who}, valid once, for ${Math.round(CODE_TTL_MS / 60_000)} minutes:`, link.url, 'Open it in the browser you want to use; anyone who has it can sign in as you until then.'].join('\n');
}
