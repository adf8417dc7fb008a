/**
 * issue 22: the `voice` section. Absent means voice notes are kept in the inbox but not
 * transcribed. Defaults that depend on the endpoint (model names, the formats it takes) are
 * filled in here, so everything that reads the config sees one resolved value; the keys are
 * filled in from the environment by load.ts (`withVoiceKeys`), never logged.
 */
import { z } from 'zod';
import { baseUrlWithoutSlash, nonEmptyString, positiveInt } from './schema-parts.js';

/** File extensions an endpoint may be told it accepts (`voice.formats`). */
export const AUDIO_EXTENSIONS = ['flac', 'mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'ogg', 'oga', 'opus', 'wav', 'webm', 'aac', 'amr'] as const;
export type AudioExtension = (typeof AUDIO_EXTENSIONS)[number];

/** What OpenAI's /v1/audio/transcriptions takes; it decides by the file name's extension. */
export const OPENAI_AUDIO_FORMATS: readonly AudioExtension[] = ['flac', 'mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'ogg', 'wav', 'webm'];

/** Speech formats of /v1/audio/speech. `opus` is Ogg/Opus: what a voice message is made of. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export const VOICE_REPLY_MODES = ['never', 'when_spoken_to', 'always'] as const;
export type VoiceReplyMode = (typeof VOICE_REPLY_MODES)[number];

/** Where the key comes from when `api_key` is not written (issue 22). */
export const VOICE_KEY_ENV = 'HOB_VOICE_API_KEY';

type KnownEndpoint = { transcriptionModel: string; speech?: { model: string; voice: string }; formats: readonly AudioExtension[]; keyEnv?: string };

/** Hosted endpoints whose names and formats are known; any other server must be told its model. */
const KNOWN_ENDPOINTS: Record<string, KnownEndpoint> = {
  'api.openai.com': { transcriptionModel: 'whisper-1', speech: { model: 'gpt-4o-mini-tts', voice: 'alloy' }, formats: OPENAI_AUDIO_FORMATS, keyEnv: 'OPENAI_API_KEY' },
  'api.groq.com': { transcriptionModel: 'whisper-large-v3-turbo', formats: OPENAI_AUDIO_FORMATS },
};

function knownEndpoint(baseUrl: string): KnownEndpoint | undefined {
  return KNOWN_ENDPOINTS[new URL(baseUrl).hostname.toLowerCase()];
}

const LANGUAGE = 'expected a language code like "en" or "de" (ISO 639-1)';
const ENDPOINT = 'expected the URL of an OpenAI-compatible endpoint like "https://api.openai.com/v1" or "http://localhost:8000/v1"';
/** Empty means "not set" (withVoiceKeys then reads the environment), as for model.api_key. */
const optionalKey = z.string({ error: 'expected a string' }).optional();

const ttsSchema = z.lazy(() =>
  z.strictObject({
    /** Default: voice.base_url. */
    base_url: baseUrlWithoutSlash.optional(),
    model: nonEmptyString.optional(),
    voice: nonEmptyString.optional(),
    api_key: optionalKey,
    /** The format of spoken answers sent as audio files; voice messages are always Ogg/Opus. */
    format: z.enum(SPEECH_FORMATS).default('mp3'),
    /** Longer answers stay text only. */
    max_chars: positiveInt.default(700),
  }),
);

const voiceInputSchema = z.lazy(() =>
  z.strictObject({
    base_url: z.string({ error: ENDPOINT }).pipe(baseUrlWithoutSlash),
    model: nonEmptyString.optional(),
    api_key: optionalKey,
    language: z.string({ error: LANGUAGE }).regex(/^[a-zA-Z]{2,3}$/, { error: LANGUAGE }).transform((code) => code.toLowerCase()).optional(),
    /** What the server takes; others are converted with ffmpeg. Default: known for OpenAI and Groq, anything elsewhere. */
    formats: z.array(z.enum(AUDIO_EXTENSIONS)).min(1, { error: 'expected at least one format, e.g. [wav]' }).optional(),
    /** The largest voice note transcribed; OpenAI's own limit is 25 MB. */
    max_bytes: positiveInt.default(25 * 1024 * 1024),
    max_seconds: positiveInt.default(600),
    timeout_seconds: positiveInt.default(180),
    reply: z.enum(VOICE_REPLY_MODES).optional(),
    tts: ttsSchema.optional(),
  }),
);

export const voiceSchema = z.lazy(() =>
  voiceInputSchema
    .superRefine((voice, ctx) => {
      if (!URL.canParse(voice.base_url)) return;
      if (voice.model === undefined && !knownEndpoint(voice.base_url)) {
        ctx.addIssue({ code: 'custom', path: ['model'], message: 'expected the model name your server transcribes with (only api.openai.com and api.groq.com have a default), e.g. Systran/faster-whisper-small' });
      }
      if (voice.reply !== undefined && voice.reply !== 'never' && voice.tts === undefined) {
        ctx.addIssue({ code: 'custom', path: ['reply'], message: `expected never: spoken answers (${voice.reply}) need voice.tts { base_url, model, voice }` });
      }
      const tts = voice.tts;
      if (tts === undefined) return;
      const known = knownEndpoint(tts.base_url ?? voice.base_url)?.speech;
      if (tts.model === undefined && !known) ctx.addIssue({ code: 'custom', path: ['tts', 'model'], message: 'expected the speech model your server uses (only api.openai.com has a default), e.g. kokoro or tts-1' });
      if (tts.voice === undefined && !known) ctx.addIssue({ code: 'custom', path: ['tts', 'voice'], message: 'expected one of your server\'s voice names (only api.openai.com has a default), e.g. af_bella' });
    })
    .transform((voice) => {
      const known = knownEndpoint(voice.base_url);
      const tts = voice.tts && {
        ...voice.tts,
        base_url: voice.tts.base_url ?? voice.base_url,
        // Checked above: without a known default these are set.
        model: voice.tts.model ?? knownEndpoint(voice.tts.base_url ?? voice.base_url)?.speech?.model ?? '',
        voice: voice.tts.voice ?? knownEndpoint(voice.tts.base_url ?? voice.base_url)?.speech?.voice ?? '',
      };
      return {
        ...voice,
        model: voice.model ?? known?.transcriptionModel ?? '',
        /** undefined: the server takes any format (and converts itself). */
        formats: voice.formats ?? known?.formats,
        reply: voice.reply ?? (tts ? 'when_spoken_to' : 'never'),
        tts,
      };
    })
    .optional(),
);

export type VoiceConfig = NonNullable<z.output<typeof voiceSchema>>;
export type VoiceTtsConfig = NonNullable<VoiceConfig['tts']>;

/**
 * The keys, resolved: `api_key` as written (empty means unset), else HOB_VOICE_API_KEY,
 * else OPENAI_API_KEY when the endpoint is OpenAI's. The speech key also falls back to the
 * transcription key when both talk to the same endpoint.
 */
export function withVoiceKeys(voice: VoiceConfig, env: NodeJS.ProcessEnv): VoiceConfig {
  const keyFor = (written: string | undefined, baseUrl: string): string | undefined => {
    if (written) return written;
    if (env[VOICE_KEY_ENV]) return env[VOICE_KEY_ENV];
    const fallback = knownEndpoint(baseUrl)?.keyEnv;
    return (fallback && env[fallback]) || undefined;
  };
  const apiKey = keyFor(voice.api_key, voice.base_url);
  const tts = voice.tts && { ...voice.tts, api_key: keyFor(voice.tts.api_key, voice.tts.base_url) ?? (voice.tts.base_url === voice.base_url ? apiKey : undefined) };
  return { ...voice, api_key: apiKey, tts };
}
