/**
 * The signed-in page's calls: its event stream, sending a message (with files uploaded
 * first), pressing a button, downloading a file. Everything is scoped to the session's own
 * chat: a message id, a button or a file id from another chat is refused or not found.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Attachment } from '../../src/gateway/channel.js';
import { inboundOf, signedIn, type WebApiContext } from './api-context.js';
import type { ChatLog, FileInfo } from './chat-log.js';
import { HttpError, readBody, readJson, sendJson } from './http-guard.js';
import { pageMessage } from './page-events.js';

/** The gateway keeps files up to 20 MB; a bigger upload would only be refused later. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
export const MAX_TEXT_CHARS = 32_000;
/** What one chat may upload in a day: anyone who asked for access can upload before an owner approves them. */
export const DAILY_UPLOAD_BYTES = 100 * 1024 * 1024;
const MAX_ATTACHMENTS = 10;

export const NOT_YOURS = 'This button is not yours: it is not on a message in your chat.';

export function openEvents(req: IncomingMessage, res: ServerResponse, context: WebApiContext): void {
  const { person, tokenHash } = signedIn(req, context);
  context.hub.open(res, { chatId: person.id, tokenHash }, context.snapshot(person));
}

export async function postMessage(req: IncomingMessage, res: ServerResponse, context: WebApiContext): Promise<void> {
  const { person } = signedIn(req, context);
  const body = await readJson(req, 4 * MAX_TEXT_CHARS + 4096);
  const text = body['text'] ?? '';
  if (typeof text !== 'string') throw new HttpError(400, '"text" must be a string.');
  if (text.length > MAX_TEXT_CHARS) throw new HttpError(413, `Your message is ${text.length.toLocaleString('en-US')} characters; the limit is ${MAX_TEXT_CHARS.toLocaleString('en-US')}. Send it as a file instead.`);
  const ids = body['attachments'] ?? [];
  if (!Array.isArray(ids) || ids.length > MAX_ATTACHMENTS || !ids.every((id) => typeof id === 'string')) throw new HttpError(400, `"attachments" must be a list of at most ${MAX_ATTACHMENTS} upload ids.`);
  const files = (ids as string[]).map((id) => {
    const file = context.chat.file(person.id, id);
    if (!file?.uploaded) throw new HttpError(400, 'An attachment is not a file you uploaded here; attach it again.');
    return file;
  });
  if (text.trim() === '' && files.length === 0) throw new HttpError(400, 'Write something or attach a file.');
  const nonce = body['nonce'];
  if (nonce !== undefined && (typeof nonce !== 'string' || nonce.length > 64)) throw new HttpError(400, '"nonce" must be a string of at most 64 characters.');
  const sink = context.sink();
  if (!sink) throw new HttpError(503, 'hob is not running its chats right now; send it again in a moment.');
  const { message, isNew } = context.chat.addPerson(person.id, { text, attachments: files, ...(nonce !== undefined ? { nonce } : {}) });
  const shown = pageMessage(message);
  if (isNew) {
    context.hub.toChat(person.id, { type: 'message', message: shown });
    sink.message(inboundOf(person, { text, attachments: files.map((file) => attachmentOf(file, context.chat)), messageId: String(message.id), updateId: `m${message.id}` }));
  }
  sendJson(res, 202, { message: shown });
}

/** A file for the next message: the raw bytes, its name in `X-File-Name` (URL-encoded). */
export async function upload(req: IncomingMessage, res: ServerResponse, context: WebApiContext): Promise<void> {
  const { person } = signedIn(req, context);
  const name = decodeName(req.headers['x-file-name']);
  const room = DAILY_UPLOAD_BYTES - context.chat.uploadedBytes(person.id, Date.now() - 86_400_000);
  if (room <= 0) throw new HttpError(429, 'You uploaded 100 MB in the last day, the limit; send more files tomorrow.');
  const data = await readBody(req, Math.min(MAX_UPLOAD_BYTES, room), name);
  if (data.length === 0) throw new HttpError(400, `${name} is empty.`);
  const mime = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() || 'application/octet-stream';
  const file = await context.chat.saveFile(person.id, { name, mime: /^[\w.+-]+\/[\w.+-]+$/.test(mime) ? mime : 'application/octet-stream', data, uploaded: true });
  sendJson(res, 201, { file });
}

export async function press(req: IncomingMessage, res: ServerResponse, context: WebApiContext): Promise<void> {
  const { person } = signedIn(req, context);
  const body = await readJson(req);
  const messageId = Number(body['messageId']);
  const data = body['data'];
  if (!Number.isSafeInteger(messageId) || typeof data !== 'string' || data.length > 64) throw new HttpError(400, 'A press names "messageId" and the button\'s "data".');
  // Only a button on a message in the presser's own chat: whatever another chat's ids are, they press nothing.
  const message = context.chat.get(person.id, messageId);
  if (!message?.fromBot) {
    context.logger.warn({ user: person.id, message: messageId }, 'refused a press on a message outside the presser\'s chat');
    throw new HttpError(403, NOT_YOURS);
  }
  if (!message.buttons.flat().some((button) => button.data === data)) throw new HttpError(409, 'This button is no longer active.');
  const sink = context.sink();
  if (!sink) throw new HttpError(503, 'hob is not running its chats right now; press again in a moment.');
  sink.button({
    platform: 'web',
    chatId: person.id,
    userId: person.id,
    userName: person.name,
    data,
    messageRef: { chatId: person.id, messageId: String(message.id), ...(message.file ? { isFile: true } : {}) },
    answer: async (text) => {
      if (text) context.hub.toChat(person.id, { type: 'notice', text });
    },
  });
  sendJson(res, 202, {});
}

/** A file of this chat, as a download (never shown inline: it could be HTML written by anyone). */
export async function download(req: IncomingMessage, res: ServerResponse, context: WebApiContext, id: string): Promise<void> {
  const { person } = signedIn(req, context);
  const file = /^[0-9a-f]{32}$/.test(id) ? context.chat.file(person.id, id) : undefined;
  if (!file) throw new HttpError(404, 'No such file in your chat.');
  const data = await context.chat.readFile(file.id);
  res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(data.length),
    'Content-Disposition': `attachment; filename="${file.name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    'Cache-Control': 'private, no-store',
  });
  res.end(data);
}

export function attachmentOf(file: FileInfo, chat: ChatLog): Attachment {
  const kind = file.mime.startsWith('image/') ? 'image' : file.mime.startsWith('audio/') ? 'audio' : file.mime.startsWith('video/') ? 'video' : 'document';
  return { kind, download: () => chat.readFile(file.id), ref: file.id, fileName: file.name, mimeType: file.mime, sizeBytes: file.size };
}

function decodeName(header: string | string[] | undefined): string {
  let name = typeof header === 'string' ? header : '';
  try {
    name = decodeURIComponent(name);
  } catch {
    throw new HttpError(400, 'X-File-Name must be URL-encoded.');
  }
  // Only the last path part, without control characters.
  const base = name.split(/[\\/]/).pop()?.replace(/[\p{Cc}\p{Cf}]+/gu, '').trim().slice(0, 200) ?? '';
  return base || 'file';
}
