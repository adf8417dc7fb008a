/**
 * A fake OpenAI-compatible `/v1/audio/transcriptions` on 127.0.0.1:0, as strict as OpenAI's:
 * multipart only, `file` and `model` required, the format judged by the file name's
 * extension (or, like whisper.cpp's server, by the bytes), ISO 639-1 languages, a 413 past
 * its size limit, `json` / `text` / `verbose_json` answers. It hears nothing: it answers the
 * transcript it was told for those exact bytes, else a fixed one.
 *
 * ```ts
 * const fake = await startFakeTranscription({ apiKey: 'sk-test' });
 * fake.transcriptFor(readFileSync('note.ogg'), 'Remind me to call Anna at five.');
 * // voice: { base_url: fake.baseUrl, model: whisper-1 }
 * fake.failNext(1); // the next request answers 500
 * ```
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/** One upload as the fake received it. */
export type TranscriptionRequest = {
  apiKey: string | undefined;
  model: string | undefined;
  language: string | undefined;
  responseFormat: string | undefined;
  fileName: string | undefined;
  contentType: string | undefined;
  /** What the bytes are, by their magic numbers: ogg, wav, mp3, m4a, aac, flac, webm or unknown. */
  container: string;
  bytes: number;
  sha256: string;
};

/** How the server says no: OpenAI's JSON, FastAPI's `{detail}` (faster-whisper-server), whisper.cpp's `{error}` with status 200. */
export type ErrorStyle = 'openai' | 'fastapi' | 'whisper.cpp';

export type FakeTranscriptionOptions = {
  /** Required key (Authorization: Bearer); any or none when unset. */
  apiKey?: string;
  /** Formats taken; default OpenAI's. 'any' takes every audio container. */
  accepts?: readonly string[] | 'any';
  /** 'extension' (OpenAI: the file name decides) or 'content' (whisper.cpp: the bytes decide). */
  judgeBy?: 'extension' | 'content';
  errorStyle?: ErrorStyle;
  /** Largest upload; default OpenAI's 25 MB. */
  maxBytes?: number;
  /** The transcript for audio it was not told about. */
  transcript?: string;
  /** Milliseconds to wait before answering (for time limits). */
  delayMs?: number;
};

export type FakeTranscription = {
  /** For voice.base_url: origin + "/v1". */
  baseUrl: string;
  requests: TranscriptionRequest[];
  /** The transcript (and reported length) for uploads of exactly these bytes. */
  transcriptFor(audio: Buffer, text: string, seconds?: number): void;
  /** The next `count` requests answer `status` (default 500). */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
};

export const OPENAI_FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const RESPONSE_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'];

/** The fake's own reading of magic numbers (kept apart from hob's, so a bug there cannot hide here). */
function containerOf(bytes: Buffer): string {
  const at = (start: number, text: string) => bytes.toString('latin1', start, start + text.length) === text;
  if (at(0, 'OggS')) return 'ogg';
  if (at(0, 'RIFF') && at(8, 'WAVE')) return 'wav';
  if (at(0, 'fLaC')) return 'flac';
  if (at(0, 'ID3')) return 'mp3';
  if (at(4, 'ftyp')) return at(8, 'M4A') ? 'm4a' : 'mp4';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  if (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0) return ((bytes[1] ?? 0) & 0x06) === 0 ? 'aac' : 'mp3';
  return 'unknown';
}

const hash = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function startFakeTranscription(options: FakeTranscriptionOptions = {}): Promise<FakeTranscription> {
  const accepts = options.accepts ?? OPENAI_FORMATS;
  const maxBytes = options.maxBytes ?? 26_214_400;
  const style = options.errorStyle ?? 'openai';
  const told = new Map<string, { text: string; seconds?: number }>();
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  const requests: TranscriptionRequest[] = [];

  const server = http.createServer((req, res) => {
    const reply = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const refuse = (status: number, message: string, type = 'invalid_request_error') => {
      if (style === 'fastapi') return reply(status, JSON.stringify({ detail: message }));
      if (style === 'whisper.cpp') return reply(status === 401 || status === 413 || status >= 500 ? status : 200, JSON.stringify({ error: message }));
      reply(status, JSON.stringify({ error: { message, type, param: null, code: null } }));
    };
    void (async () => {
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/audio/transcriptions') return refuse(404, `Invalid URL (${req.method} ${req.url})`);
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (options.apiKey !== undefined && key !== options.apiKey) {
        const shown = key ? `${key.slice(0, 3)}****${key.slice(-4)}` : 'none';
        req.resume();
        return refuse(401, `Incorrect API key provided: ${shown}. You can find your API key in your account settings.`);
      }
      const length = Number(req.headers['content-length'] ?? Number.NaN);
      if (length > maxBytes) {
        req.resume();
        return refuse(413, `Maximum content size limit (${maxBytes}) exceeded (${length} bytes read)`, 'server_error');
      }
      if (failures.count > 0) {
        failures = { ...failures, count: failures.count - 1 };
        req.resume();
        return refuse(failures.status, 'The server had an error while processing your request. Sorry about that!', 'server_error');
      }
      const contentType = req.headers['content-type'] ?? '';
      if (!contentType.startsWith('multipart/form-data')) {
        req.resume();
        return refuse(400, `Invalid Content-Type header (${contentType || 'none'}), expected multipart/form-data.`);
      }
      const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': contentType }, body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } as RequestInit).formData();
      const file = form.get('file');
      const field = (name: string) => {
        const value = form.get(name);
        return typeof value === 'string' ? value : undefined;
      };
      const bytes = file instanceof File ? Buffer.from(await file.arrayBuffer()) : undefined;
      const recorded: TranscriptionRequest = {
        apiKey: key,
        model: field('model'),
        language: field('language'),
        responseFormat: field('response_format'),
        fileName: file instanceof File ? file.name : undefined,
        contentType: file instanceof File ? file.type : undefined,
        container: bytes ? containerOf(bytes) : 'none',
        bytes: bytes?.length ?? 0,
        sha256: bytes ? hash(bytes) : '',
      };
      requests.push(recorded);
      if (!bytes) return refuse(400, '1 validation error for Request\nbody -> file\n  field required (type=value_error.missing)');
      if (bytes.length > maxBytes) return refuse(413, `Maximum content size limit (${maxBytes}) exceeded (${bytes.length} bytes read)`, 'server_error');
      if (!recorded.model) return refuse(400, 'you must provide a model parameter');
      if (recorded.language !== undefined && !/^[a-z]{2}$/.test(recorded.language)) {
        return refuse(400, `Invalid language '${recorded.language}'. Language parameter must be specified in ISO-639-1 format.`);
      }
      const format = recorded.responseFormat ?? 'json';
      if (!RESPONSE_FORMATS.includes(format)) return refuse(400, `Invalid response_format '${format}'`);
      const extension = /\.([A-Za-z0-9]+)$/.exec(recorded.fileName ?? '')?.[1]?.toLowerCase() ?? '';
      const judged = options.judgeBy === 'content' ? recorded.container : extension;
      if (accepts !== 'any' && !accepts.includes(judged)) {
        if (style === 'whisper.cpp') return refuse(400, 'failed to read audio data');
        return refuse(400, `Invalid file format. Supported formats: [${accepts.map((name) => `'${name}'`).join(', ')}]`);
      }
      if (recorded.container === 'unknown') return refuse(400, 'Audio file might be corrupted or unsupported');
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const answer = told.get(recorded.sha256) ?? { text: options.transcript ?? 'Hello from the fake transcription server.' };
      if (format === 'text' || format === 'srt' || format === 'vtt') return reply(200, `${answer.text}\n`, 'text/plain; charset=utf-8');
      if (format === 'verbose_json') {
        return reply(200, JSON.stringify({ task: 'transcribe', language: recorded.language ?? 'english', duration: answer.seconds ?? 0, text: answer.text, segments: [] }));
      }
      const usage = answer.seconds === undefined ? {} : { usage: { type: 'duration', seconds: Math.ceil(answer.seconds) } };
      reply(200, JSON.stringify({ text: answer.text, ...usage }));
    })().catch((error: unknown) => {
      if (!res.headersSent) reply(500, JSON.stringify({ error: { message: `fake: ${String(error)}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    transcriptFor: (audio, text, seconds) => void told.set(hash(audio), { text, seconds }),
    failNext: (count, status = 500) => void (failures = { count, status }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
