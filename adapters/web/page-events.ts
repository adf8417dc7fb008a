/**
 * What the page receives on its event stream, and how a stored message looks to it. hob's
 * messages carry HTML rendered (and escaped) on the server; a person's carry their text, which
 * the page only ever sets as text. Buttons carry their data, which the page posts back as is.
 */
import type { BotCommand, Button } from '../../src/gateway/channel.js';
import type { ChatMessage } from './chat-log.js';
import type { WebPerson } from './identities.js';
import { renderHtml } from './render.js';

export type PageFile = { name: string; size: number; url?: string };

export type PageMessage = {
  /** The stored message's number (a live answer has its number from its first text on). */
  id: string;
  from: 'hob' | 'me';
  /** hob's messages: safe HTML. */
  html?: string;
  /** The person's messages: text, shown as text. */
  text?: string;
  buttons: Button[][];
  /** A file hob sent: its download link works only for this chat's sessions. */
  file?: PageFile;
  /** Files the person sent. */
  attachments: PageFile[];
  /** The answer is still being written. */
  live?: boolean;
  at: number;
};

export type PageEvent =
  | { type: 'snapshot'; me: WebPerson; messages: PageMessage[]; commands: BotCommand[] }
  /** A new message, or a new version of one with the same id (a live answer's final text, an edit). */
  | { type: 'message'; message: PageMessage }
  | { type: 'delete'; id: string }
  | { type: 'typing' }
  /** A short word for the person who pressed a button. */
  | { type: 'notice'; text: string }
  | { type: 'commands'; commands: BotCommand[] }
  /** The session ended (signed out here or elsewhere, revoked, expired). */
  | { type: 'signedout' };

export function pageMessage(message: ChatMessage): PageMessage {
  const { file } = message;
  return {
    id: String(message.id),
    from: message.fromBot ? 'hob' : 'me',
    ...(message.fromBot ? { html: renderHtml(message.text, message.plain) } : { text: message.text }),
    buttons: message.buttons,
    ...(file ? { file: { name: file.name, size: file.size, url: `/api/files/${file.id}` } } : {}),
    attachments: message.attachments.map((attachment) => ({ name: attachment.name, size: attachment.size })),
    at: message.createdAt,
  };
}

/** A live answer as the page shows it while it is written. */
export function liveMessage(id: string, text: string, at: number): PageMessage {
  return { id, from: 'hob', html: renderHtml(text, false), buttons: [], attachments: [], live: true, at };
}
