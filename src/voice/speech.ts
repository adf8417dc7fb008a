/**
 * Spoken answers: when an answer is spoken (`voice.reply`, the message was a voice note, the
 * answer is short and has no code), what is read aloud (the answer without its Markdown),
 * and the client of any OpenAI-compatible `/v1/audio/speech`.
 */
import type { Token } from 'marked';
import type { SpeechFormat, VoiceReplyMode } from '../config/voice-schema.js';
import { HobError } from '../core/errors.js';
import { OnFirstNeed } from '../core/on-first-need.js';
import type { SpokenDelivery } from '../core/spoken-delivery.js';
import { EndpointError, postToEndpoint } from './endpoint.js';
import { sniffContainer, type AudioContainer } from './formats.js';

export type { SpokenDelivery };

/**
 * marked's lexer, which speakableText and shouldSpeak read answers with: only once an answer may
 * be spoken (`voice.tts` set), not when hob starts (its top level builds its rules).
 */
const lexer = new OnFirstNeed("marked's lexer", async () => (await import('marked')).Lexer);

export async function loadSpeechLexer(): Promise<void> {
  await lexer.load();
}

/** The text to read aloud, or undefined when the answer should stay text (code, tables). After loadSpeechLexer(). */
export function speakableText(markdown: string): string | undefined {
  const tokens = new (lexer.loaded())({ gfm: true }).lex(markdown);
  const parts: string[] = [];
  if (!walk(tokens, parts)) return undefined;
  const text = parts.join('').replace(/[ \t]+/g, ' ').replace(/\s*\n\s*/g, '\n').trim();
  return text || undefined;
}

/** Appends what each token says; false when a token cannot be spoken sensibly. */
function walk(tokens: readonly Token[], parts: string[]): boolean {
  for (const token of tokens) {
    switch (token.type) {
      case 'code':
      case 'table':
        return false;
      case 'codespan':
      case 'text':
      case 'escape':
        if ('tokens' in token && token.tokens?.length) {
          if (!walk(token.tokens, parts)) return false;
        } else {
          parts.push(decodeEntities(token.text));
        }
        break;
      case 'image':
      case 'html':
      case 'hr':
      case 'def':
        break;
      case 'br':
      case 'space':
        parts.push('\n');
        break;
      case 'list':
        for (const item of token.items) {
          if (!walk(item.tokens, parts)) return false;
          parts.push('\n');
        }
        break;
      default:
        if ('tokens' in token && Array.isArray(token.tokens)) {
          if (!walk(token.tokens, parts)) return false;
        } else if ('text' in token && typeof token.text === 'string') {
          parts.push(decodeEntities(token.text));
        }
        // A paragraph or heading ends a sentence; say it with a pause.
        if (token.type === 'paragraph' || token.type === 'heading' || token.type === 'blockquote') parts.push('\n');
    }
  }
  return true;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };
const decodeEntities = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '');

/**
 * Whether an answer is also sent as speech (after loadSpeechLexer()): never with `never`; with `when_spoken_to` only
 * when the person spoke (the message answered was a voice note); with `always` for every
 * answer — and in every mode only when it is short enough and has nothing that reads badly aloud.
 */
export function shouldSpeak(input: { mode: VoiceReplyMode; spokenTo: boolean; answer: string; maxChars: number }): boolean {
  if (!speaksInMode(input.mode, input.spokenTo)) return false;
  const text = speakableText(input.answer);
  return text !== undefined && text.length <= input.maxChars;
}

/** Whether `voice.reply` speaks any answer to this message (shouldSpeak's first question; no answer read yet). */
export function speaksInMode(mode: VoiceReplyMode, spokenTo: boolean): boolean {
  return mode === 'always' || (mode === 'when_spoken_to' && spokenTo);
}

/** The speech format for a delivery: a voice message is Ogg/Opus whatever is configured. */
export function speechFormatFor(delivery: SpokenDelivery, configured: SpeechFormat): SpeechFormat {
  return delivery === 'voice_message' ? 'opus' : configured;
}

export type SpeechSettings = { baseUrl: string; model: string; voice: string; apiKey?: string; timeoutMs: number };

/** Audio ready to send: its bytes, and the name and type to send them under. */
export type SpokenAudio = { data: Buffer; format: SpeechFormat; fileName: string; mimeType: string };

/** What the endpoint answered: audio, and which container it really is (servers may ignore response_format). */
export type SpeechAnswer = { data: Buffer; container: AudioContainer };

export class SpeechError extends HobError {
  override name = 'SpeechError';
}

const CONTAINER_OF: Record<SpeechFormat, AudioContainer> = { mp3: 'mp3', opus: 'ogg', aac: 'aac', flac: 'flac', wav: 'wav' };
const FILE: Record<SpeechFormat, { extension: string; mimeType: string }> = {
  mp3: { extension: 'mp3', mimeType: 'audio/mpeg' },
  opus: { extension: 'ogg', mimeType: 'audio/ogg' },
  aac: { extension: 'aac', mimeType: 'audio/aac' },
  flac: { extension: 'flac', mimeType: 'audio/flac' },
  wav: { extension: 'wav', mimeType: 'audio/wav' },
};
/** A short answer's speech is well under a megabyte; this only stops a runaway server. */
const MAX_SPEECH_BYTES = 20 * 1024 * 1024;

/** Speaks a text. Throws SpeechError (never with the key in it) or the AbortError of `signal`. */
export type Speaker = (text: string, format: SpeechFormat, signal?: AbortSignal) => Promise<SpeechAnswer>;

export function speechClient(settings: SpeechSettings): Speaker {
  const where = `${settings.baseUrl} (${settings.model}, voice ${settings.voice})`;
  return async (text, format, signal) => {
    let body: Buffer;
    try {
      const answer = await postToEndpoint({
        url: `${settings.baseUrl}/audio/speech`,
        apiKey: settings.apiKey,
        body: JSON.stringify({ model: settings.model, voice: settings.voice, input: text, response_format: format }),
        timeoutMs: settings.timeoutMs,
        signal,
        maxResponseBytes: MAX_SPEECH_BYTES,
      });
      body = answer.body;
    } catch (error) {
      if (!(error instanceof EndpointError)) throw error;
      const hint = error.failure.status === 401 || error.failure.status === 403 ? '; check voice.tts.api_key or HOB_VOICE_API_KEY' : '';
      throw new SpeechError(`${where} failed: ${error.message}${hint}`);
    }
    const container = sniffContainer(body);
    if (container === 'unknown') throw new SpeechError(`${where} answered with something that is not audio (${body.length} bytes)`);
    return { data: body, container };
  };
}

/** Whether an answer is the format asked for: a server that ignores response_format would make a voice message of an mp3. */
export function isFormat(answer: SpeechAnswer, format: SpeechFormat): boolean {
  return answer.container === CONTAINER_OF[format];
}

export function spokenAudio(data: Buffer, format: SpeechFormat): SpokenAudio {
  return { data, format, fileName: `answer.${FILE[format].extension}`, mimeType: FILE[format].mimeType };
}
