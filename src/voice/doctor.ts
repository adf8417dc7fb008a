/**
 * What `hob doctor` says about voice: whether notes are transcribed and the endpoint answers
 * with the key (half a second of generated silence), whether answers can be spoken, and
 * whether ffmpeg is there to convert what an endpoint refuses.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VoiceConfig } from '../config/voice-schema.js';
import type { Check } from '../core/check.js';
import { errorMessage } from '../core/errors.js';
import { findFfmpeg } from './ffmpeg.js';
import { speechClient } from './speech.js';
import { transcriptionClient } from './transcribe.js';
import { silentWav } from './wav.js';

export type VoiceCheckOptions = {
  /** How a key is shown ("sk-a…9z"); the CLI passes its masking function. */
  mask: (key: string) => string;
  ffmpegPath?: string;
  timeoutMs?: number;
};

export async function checkVoice(config: VoiceConfig | undefined, options: VoiceCheckOptions): Promise<Check[]> {
  if (!config) {
    return [{ name: 'voice notes', ok: true, detail: 'not configured: voice notes are kept in the inbox but not transcribed (set voice.base_url to transcribe them)' }];
  }
  const checks = [await checkTranscription(config, options)];
  if (config.tts) checks.push(await checkSpeech(config, options));
  const ffmpeg = await findFfmpeg(options.ffmpegPath);
  checks.push(
    ffmpeg
      ? { name: 'ffmpeg', ok: true, detail: `${ffmpeg.version}${ffmpeg.ffprobe ? ' with ffprobe' : ''}: notes in formats the endpoint refuses are converted` }
      : { name: 'ffmpeg', ok: true, detail: 'not installed: notes in formats the endpoint refuses cannot be converted (install it, e.g. apt-get install ffmpeg)' },
  );
  return checks;
}

const withKey = (key: string | undefined, mask: (key: string) => string) => (key ? `with key ${mask(key)}` : 'without a key');

async function checkTranscription(config: VoiceConfig, options: VoiceCheckOptions): Promise<Check> {
  const where = `${config.base_url} (${config.model})`;
  const transcribe = transcriptionClient({ baseUrl: config.base_url, model: config.model, apiKey: config.api_key, language: config.language, timeoutMs: options.timeoutMs ?? 20_000 });
  const dir = await mkdtemp(join(tmpdir(), 'hob-doctor-'));
  try {
    const path = join(dir, 'silence.wav');
    await writeFile(path, silentWav(0.5));
    await transcribe({ path, fileName: 'silence.wav', mimeType: 'audio/wav' });
    return { name: 'voice notes', ok: true, detail: `${where} transcribes ${withKey(config.api_key, options.mask)}` };
  } catch (error) {
    return { name: 'voice notes', ok: false, detail: errorMessage(error) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function checkSpeech(config: VoiceConfig, options: VoiceCheckOptions): Promise<Check> {
  const tts = config.tts as NonNullable<VoiceConfig['tts']>;
  try {
    const speak = speechClient({ baseUrl: tts.base_url, model: tts.model, voice: tts.voice, apiKey: tts.api_key, timeoutMs: options.timeoutMs ?? 20_000 });
    const answer = await speak('OK.', 'mp3');
    return { name: 'spoken answers', ok: true, detail: `${tts.base_url} (${tts.model}, voice ${tts.voice}) speaks ${withKey(tts.api_key, options.mask)} (${answer.container} audio); reply: ${config.reply}` };
  } catch (error) {
    return { name: 'spoken answers', ok: false, detail: errorMessage(error) };
  }
}
