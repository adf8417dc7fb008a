/**
 * A fake OpenAI-compatible `/v1/audio/speech` on 127.0.0.1:0. It checks the request as OpenAI
 * does (model, voice, input up to 4,096 characters, response_format) and answers real audio
 * of the format asked for: the shipped fixtures (test/fixtures/audio) for opus (Ogg/Opus),
 * mp3, aac and flac, a generated tone for wav. `answerAs` makes it a server that ignores
 * response_format.
 *
 * ```ts
 * const fake = await startFakeSpeech({ apiKey: 'sk-test' });
 * // voice.tts: { base_url: fake.baseUrl, model: tts-1, voice: alloy }
 * fake.requests[0].body.response_format; // "opus"
 * ```
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type SpeechRequestBody = { model?: unknown; voice?: unknown; input?: unknown; response_format?: unknown; speed?: unknown; instructions?: unknown };
export type SpeechRequest = { apiKey: string | undefined; body: SpeechRequestBody };

export type FakeSpeechOptions = {
  apiKey?: string;
  /** Voices it has; default OpenAI's. */
  voices?: readonly string[];
  /** Answer this format whatever is asked (a server that ignores response_format). */
  answerAs?: SpeechAudioFormat;
};

export type FakeSpeech = {
  /** For voice.tts.base_url: origin + "/v1". */
  baseUrl: string;
  requests: SpeechRequest[];
  /** The bytes it answers for a format. */
  audio(format: SpeechAudioFormat): Buffer;
  /** The next `count` requests answer `status` (default 500). */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
};

export type SpeechAudioFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';
const FORMATS: readonly SpeechAudioFormat[] = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const CONTENT_TYPES: Record<SpeechAudioFormat, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };

const fixture = (name: string) => readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url));

/** Half a second of a 440 Hz tone, 24 kHz mono 16-bit (OpenAI's pcm is 24 kHz too). */
function tone(): Buffer {
  const samples = 12_000;
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24_000)), i * 2);
  return pcm;
}

function wavOf(pcm: Buffer): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(24_000, 24);
  header.writeUInt32LE(48_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

export async function startFakeSpeech(options: FakeSpeechOptions = {}): Promise<FakeSpeech> {
  const voices = options.voices ?? OPENAI_VOICES;
  const pcm = tone();
  const audio: Record<SpeechAudioFormat, Buffer> = {
    mp3: fixture('voice-note.mp3'),
    opus: fixture('voice-note.ogg'),
    aac: fixture('voice-note.aac'),
    flac: fixture('okay.flac'),
    wav: wavOf(pcm),
    pcm,
  };
  const requests: SpeechRequest[] = [];
  let failures = { count: 0, status: 500 };

  const server = http.createServer((req, res) => {
    const reply = (status: number, body: Buffer | string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const refuse = (status: number, message: string) => reply(status, JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
    void (async () => {
      let raw = '';
      for await (const chunk of req) raw += String(chunk);
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/audio/speech') return refuse(404, `Invalid URL (${req.method} ${req.url})`);
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (options.apiKey !== undefined && key !== options.apiKey) return refuse(401, `Incorrect API key provided: ${key ? `${key.slice(0, 3)}****${key.slice(-4)}` : 'none'}.`);
      let body: SpeechRequestBody;
      try {
        body = JSON.parse(raw) as SpeechRequestBody;
      } catch {
        return refuse(400, 'We could not parse the JSON body of your request.');
      }
      requests.push({ apiKey: key, body });
      if (failures.count > 0) {
        failures = { ...failures, count: failures.count - 1 };
        return refuse(failures.status, 'The server had an error while processing your request.');
      }
      if (typeof body.model !== 'string' || !body.model) return refuse(400, "Missing required parameter: 'model'.");
      if (typeof body.input !== 'string' || !body.input) return refuse(400, "Missing required parameter: 'input'.");
      if (body.input.length > 4096) return refuse(400, `[{'type': 'string_too_long', 'loc': ('body', 'input'), 'msg': 'String should have at most 4096 characters'}]`);
      if (typeof body.voice !== 'string' || !voices.includes(body.voice)) return refuse(400, `Invalid value for 'voice': ${JSON.stringify(body.voice)}. Supported values are: ${voices.join(', ')}.`);
      const asked = body.response_format ?? 'mp3';
      if (typeof asked !== 'string' || !FORMATS.includes(asked as SpeechAudioFormat)) return refuse(400, `Invalid value for 'response_format': ${JSON.stringify(asked)}.`);
      const format = options.answerAs ?? (asked as SpeechAudioFormat);
      reply(200, audio[format], CONTENT_TYPES[format]);
    })().catch((error: unknown) => {
      if (!res.headersSent) refuse(500, `fake: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    audio: (format) => audio[format],
    failNext: (count, status = 500) => void (failures = { count, status }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
