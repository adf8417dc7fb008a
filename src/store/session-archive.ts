/**
 * A person's past sessions in the Store port: listing, full-text search over their own
 * messages, and the whole record of one session for `hob sessions show | export`. Every query
 * is scoped to one person; another person's session is "not found", never shown.
 */
import type { Message } from '../core/messages.js';

export type SessionSummary = {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messages: number;
  /** Characters of text stored (a rough size; tokens are about a quarter). */
  chars: number;
  active: boolean;
};

export type SessionHit = {
  sessionId: string;
  title: string;
  role: 'user' | 'assistant';
  /** The matching passage, the matched words between « and ». */
  snippet: string;
  at: number;
};

export type StoredMessage = { role: 'user' | 'assistant'; content: Message['content']; at: number };

export interface SessionArchive {
  /** The person's sessions, newest first. `personId: null` lists everyone's (the owner at the terminal, `--all`). */
  list(personId: string | null, limit?: number): SessionSummary[];
  /**
   * Full-text search over the person's own messages, best matches first; with `sessionKey`,
   * only in that conversation's sessions (a group: nothing private from elsewhere).
   */
  search(personId: string, query: string, limit?: number, sessionKey?: string): SessionHit[];
  /** Every stored message of one session, if it is this person's (`null`: the owner, any session). */
  messages(personId: string | null, sessionId: string): { title: string; messages: StoredMessage[] } | undefined;
}

const STOP_WORDS = new Set(
  'a an and are as at be but by did do does for from had has have how i in is it its me my of on or our so that the their them then there these they this to was we were what when where which who why will with you your about did we us'.split(' '),
);

/** The words of a question the archive searches for: lower-cased, without stop words and repeats. */
export function archiveWords(question: string): string[] {
  const words = question
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((word) => (word.length > 1 || /\d/.test(word)) && !STOP_WORDS.has(word));
  return [...new Set(words)];
}
