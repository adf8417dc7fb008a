import { badRequest, BotApiError, formatText, readReplyMarkup, readReplyTarget, type Params } from './params.js';
import type { Json, MessageKind, StoredFile, UploadedFile } from './types.js';
import type { FakeWorld } from './world.js';

export type MediaKind = Exclude<MessageKind, 'text'>;

const uploadLimit = 50 * 1024 * 1024;
const downloadLimit = 20 * 1024 * 1024;

const mimeByExtension: Record<string, string> = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', json: 'application/json', pdf: 'application/pdf',
  zip: 'application/zip', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif',
  ogg: 'audio/ogg', oga: 'audio/ogg', mp3: 'audio/mpeg', mp4: 'video/mp4', html: 'text/html',
};

export function guessMimeType(fileName: string): string {
  return mimeByExtension[fileName.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}

/** The Bot API object that describes a stored file inside a Message. */
export function describeFile(kind: MediaKind, file: StoredFile, extra: { duration?: number } = {}): unknown {
  const base = { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.bytes.length };
  switch (kind) {
    case 'photo': {
      const size = imageSize(file.bytes);
      return [{ ...base, width: size.width, height: size.height }];
    }
    case 'document':
      return { ...base, file_name: file.fileName ?? 'document', mime_type: file.mimeType ?? 'application/octet-stream' };
    case 'voice':
      return { ...base, duration: extra.duration ?? 1, mime_type: file.mimeType ?? 'audio/ogg' };
    case 'video_note':
      return { ...base, length: 240, duration: extra.duration ?? 1 };
    case 'audio':
    case 'video':
    case 'animation':
      return {
        ...base,
        duration: extra.duration ?? 1,
        ...(kind === 'audio' ? {} : { width: 640, height: 360 }),
        ...(file.fileName ? { file_name: file.fileName } : {}),
        mime_type: file.mimeType ?? (kind === 'audio' ? 'audio/mpeg' : 'video/mp4'),
      };
  }
}

/**
 * sendPhoto, sendDocument, sendVoice, ...: one upload (or a known file_id) plus an optional
 * caption. As on Telegram, a voice message must be Ogg/Opus, MP3 or M4A: anything else sent
 * with sendVoice arrives as a document, not as a playable voice message.
 */
export function sendMedia(world: FakeWorld, asked: MediaKind, params: Params, files: UploadedFile[]): Json {
  const chatId = params.chatId();
  const replyTo = readReplyTarget(world, chatId, params);
  const file = resolveInputFile(world, asked, params, files);
  const kind: MediaKind = asked === 'voice' && !voiceCompatible(file.bytes) ? 'document' : asked;
  const duration = params.integer('duration');
  const captionSource = params.string('caption') ?? '';
  const parseMode = params.string('parse_mode');
  const caption = formatText(captionSource, parseMode, params.json('caption_entities'));
  if (caption.text.length > 1024) throw badRequest('message caption is too long');
  const replyMarkup = readReplyMarkup(params);
  const threadId = params.integer('message_thread_id');
  const stored = world.addMessage(
    chatId,
    {
      author: 'bot',
      kind,
      sentText: captionSource,
      ...(parseMode !== undefined ? { parseMode } : {}),
      visibleText: caption.text,
      entities: caption.entities,
      ...(replyMarkup !== undefined ? { replyMarkup } : {}),
      file,
    },
    {
      ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      [kind]: describeFile(kind, file, duration !== undefined ? { duration } : {}),
      ...(caption.text ? { caption: caption.text } : {}),
      ...(caption.entities.length > 0 ? { caption_entities: caption.entities } : {}),
      ...(replyMarkup !== undefined ? { reply_markup: replyMarkup } : {}),
    },
  );
  return stored.message;
}

export function getFile(world: FakeWorld, params: Params): Json {
  const fileId = params.string('file_id') ?? '';
  const file = world.files.get(fileId);
  if (!file) throw badRequest('invalid file_id');
  if (file.bytes.length > downloadLimit) throw badRequest('file is too big');
  return { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.bytes.length, file_path: file.filePath };
}

function resolveInputFile(world: FakeWorld, kind: MediaKind, params: Params, files: UploadedFile[]): StoredFile {
  const value = params.string(kind);
  // Either `photo=attach://<part>` (what grammy sends) or a file part named after the parameter.
  const partName = value?.startsWith('attach://') ? value.slice('attach://'.length) : kind;
  const upload = files.find((file) => file.field === partName);
  if (upload) {
    if (upload.size > uploadLimit) throw new BotApiError(413, 'Request Entity Too Large');
    if (kind === 'photo' && !looksLikeImage(upload.bytes)) throw badRequest('IMAGE_PROCESS_FAILED');
    const mimeType = kind === 'document' ? guessMimeType(upload.fileName) : undefined;
    return world.storeFile(kind, upload.bytes, upload.fileName, mimeType);
  }
  if (value === undefined || value.startsWith('attach://')) throw badRequest(`there is no ${kind} in the request`);
  const known = world.files.get(value);
  if (known) return known;
  // The fake cannot fetch URLs; Telegram's answer when it cannot either.
  if (/^https?:\/\//i.test(value)) throw badRequest('failed to get HTTP URL content');
  throw badRequest('wrong file identifier/HTTP URL specified');
}

/** Ogg with an Opus stream, MP3 (an ID3 tag or a frame sync) or M4A (an ISO `ftyp` box). */
function voiceCompatible(bytes: Buffer): boolean {
  const ogg = bytes.subarray(0, 4).toString('latin1') === 'OggS' && bytes.subarray(0, 200).includes('OpusHead');
  const mp3 = bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0);
  const m4a = bytes.subarray(4, 8).toString('latin1') === 'ftyp';
  return ogg || mp3 || m4a;
}

function looksLikeImage(bytes: Buffer): boolean {
  const png = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
  const gif = bytes.subarray(0, 4).toString('latin1') === 'GIF8';
  const webp = bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP';
  return png || jpeg || gif || webp;
}

function imageSize(bytes: Buffer): { width: number; height: number } {
  if (bytes.length >= 24 && bytes.subarray(1, 4).toString('latin1') === 'PNG') {
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  }
  return { width: 320, height: 240 };
}

/** A valid 1×1 PNG for tests that need a photo Telegram would accept. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
