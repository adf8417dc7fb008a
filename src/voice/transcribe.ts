/**
 * The client of any OpenAI-compatible `/v1/audio/transcriptions`: one multipart POST with
 * plain fetch (endpoint.ts). The file goes as a file-backed Blob (`fs.openAsBlob`), so the
 * body is streamed from disk: a 10-minute note is never held in memory, and a retry reads
 * it again. (Not the openai SDK: it reduces error bodies that are not OpenAI-shaped, such
 * as faster-whisper-server's `{detail}`, to "400 status code (no body)", and the reason is
 * what tells a refused format apart and what the person is told.)
 */
import { openAsBlob } from 'node:fs';
import { HobError } from '../core/errors.js';
import { EndpointError, postToEndpoint, scrubKey } from './endpoint.js';
import { secondsText } from './measures.js';

export type TranscriptionSettings = {
  /** e.g. https://api.openai.com/v1 (the SDK appends /audio/transcriptions). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** ISO 639-1; unset lets the endpoint detect the language. */
  language?: string;
  timeoutMs: number;
  /** What to ask for; both are read, and a server that answers text to a JSON request is understood too. */
  responseFormat?: 'json' | 'text';
};

export type Transcript = {
  text: string;
  /** As the endpoint reports it (OpenAI's `usage.seconds`, `verbose_json`'s `duration`). */
  durationSeconds?: number;
};

/** Why a transcription failed, for the sentence the person sees and for learning refused formats. */
export type TranscriptionFailure = 'too_big' | 'format' | 'key' | 'timeout' | 'unavailable' | 'rejected';

export class TranscriptionError extends HobError {
  override name = 'TranscriptionError';
  constructor(
    message: string,
    readonly reason: TranscriptionFailure,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** One file to send: where it is, the name the endpoint sees (its extension decides the format for OpenAI), its type. */
export type Upload = { path: string; fileName: string; mimeType: string };

/** Transcribes one file. Throws TranscriptionError (never a key in its message), or the AbortError of `signal`. */
export type Transcriber = (upload: Upload, signal?: AbortSignal) => Promise<Transcript>;

/** A 400/415 about the file itself rather than the request: another format may pass. */
const FORMAT_REFUSAL =
  /(file|audio) format|supported formats|unsupported (file|format|audio|media|codec)|must be one of the following types|corrupt|failed to (read|decode|load) audio|could not (decode|read) (the )?(audio|file)|invalid data found|invalid (audio|file)/i;

/** The most a transcript answer may weigh (a 10-minute note's text is ~10 KB; verbose JSON more). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export function transcriptionClient(settings: TranscriptionSettings): Transcriber {
  const where = `${settings.baseUrl} (${settings.model})`;
  const url = `${settings.baseUrl}/audio/transcriptions`;
  return async (upload, signal) => {
    const form = new FormData();
    // The Blob itself, named by append: wrapping it in `new File([blob])` would copy the whole file into memory.
    form.append('file', await openAsBlob(upload.path, { type: upload.mimeType }), upload.fileName);
    form.append('model', settings.model);
    if (settings.language) form.append('language', settings.language);
    form.append('response_format', settings.responseFormat ?? 'json');
    try {
      const answer = await postToEndpoint({ url, apiKey: settings.apiKey, body: form, timeoutMs: settings.timeoutMs, signal, maxResponseBytes: MAX_ANSWER_BYTES });
      return readTranscript(answer.body.toString('utf8'), answer.contentType, where, settings.apiKey);
    } catch (error) {
      if (!(error instanceof EndpointError)) throw error;
      const { status, timeout, network, reason } = error.failure;
      if (timeout) throw new TranscriptionError(`${where} did not answer within ${secondsText(settings.timeoutMs)}`, 'timeout');
      if (reason === 'redirect') throw new TranscriptionError(`${where}: ${error.message}`, 'rejected');
      if (network) throw new TranscriptionError(`${where} could not be reached: ${reason}`, 'unavailable');
      throw classify(status, reason, where);
    }
  };
}

/** A transcript as JSON (`{ text }`) or plain text; some local servers send an error with status 200. */
function readTranscript(text: string, contentType: string, where: string, apiKey: string | undefined): Transcript {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (contentType.includes('json')) throw new TranscriptionError(`${where} answered with broken JSON`, 'rejected');
    return { text: text.trim() };
  }
  if (typeof json === 'object' && json !== null) {
    const record = json as Record<string, unknown>;
    if (typeof record['text'] === 'string') return { text: record['text'].trim(), durationSeconds: durationOf(record) };
    const error = record['error'];
    const message = typeof error === 'string' ? error : typeof error === 'object' && error !== null ? String((error as Record<string, unknown>)['message'] ?? '') : '';
    if (message) throw classify(undefined, scrubKey(message, apiKey), where);
  }
  // A JSON string or number is still text: a text answer that happens to parse ("42").
  if (!contentType.includes('json') && (typeof json === 'string' || typeof json === 'number')) return { text: text.trim() };
  throw new TranscriptionError(`${where} answered without a transcript`, 'rejected');
}

function durationOf(record: Record<string, unknown>): number | undefined {
  if (typeof record['duration'] === 'number') return record['duration'];
  const usage = record['usage'];
  if (typeof usage === 'object' && usage !== null) {
    const seconds = (usage as Record<string, unknown>)['seconds'];
    if (typeof seconds === 'number') return seconds;
  }
  return undefined;
}

function classify(status: number | undefined, reason: string, where: string): TranscriptionError {
  const said = status === undefined ? reason : `${status} ${reason}`;
  if (status === 413) return new TranscriptionError(`${where} refused the file as too large: ${said}`, 'too_big', status);
  if (status === 401 || status === 403) return new TranscriptionError(`${where} refused the key: ${said}; check voice.api_key or HOB_VOICE_API_KEY`, 'key', status);
  if ((status === undefined || status === 400 || status === 415 || status === 422) && FORMAT_REFUSAL.test(reason)) {
    return new TranscriptionError(`${where} refused the audio format: ${said}`, 'format', status);
  }
  if (status === 404) return new TranscriptionError(`${where} has no transcription endpoint: ${said}; check voice.base_url and voice.model`, 'rejected', status);
  if (status === undefined || status === 408 || status === 429 || status >= 500) return new TranscriptionError(`${where} failed: ${said}`, 'unavailable', status);
  return new TranscriptionError(`${where} refused the request: ${said}`, 'rejected', status);
}
