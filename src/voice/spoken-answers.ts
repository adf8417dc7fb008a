/**
 * Answers spoken back (`voice.reply`, `voice.tts`): the gateway asks `wants` for each final
 * answer and, when yes, `speak` for the audio to send beside the text (a voice message or an
 * audio file, as the channel delivers). Never throws (except the AbortError of a stopped
 * run): a failed speech leaves the answer as text, with a detail for the log.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpeechFormat, VoiceConfig } from '../config/voice-schema.js';
import { errorMessage } from '../core/errors.js';
import { convertAudio, findFfmpeg } from './ffmpeg.js';
import type { ConversionTarget } from './formats.js';
import { isFormat, loadSpeechLexer, shouldSpeak, speakableText, speaksInMode, speechClient, speechFormatFor, spokenAudio, type Speaker, type SpokenAudio, type SpokenDelivery } from './speech.js';

const TARGET_OF: Record<SpeechFormat, ConversionTarget> = { mp3: 'mp3', opus: 'ogg', aac: 'aac', flac: 'flac', wav: 'wav' };

export type SpokenAnswersOptions = { ffmpegPath?: string; tmpDir?: string };

export class SpokenAnswers {
  private readonly speaker: Speaker | undefined;

  constructor(
    private readonly config: VoiceConfig | undefined,
    private readonly options: SpokenAnswersOptions = {},
  ) {
    const tts = config?.tts;
    this.speaker = tts && speechClient({ baseUrl: tts.base_url, model: tts.model, voice: tts.voice, apiKey: tts.api_key, timeoutMs: (config?.timeout_seconds ?? 60) * 1000 });
  }

  /** Whether this answer is also spoken. `spokenTo`: the message it answers was a voice note. */
  async wants(answer: string, spokenTo: boolean): Promise<boolean> {
    const config = this.config;
    if (!config?.tts || !this.speaker || !speaksInMode(config.reply, spokenTo)) return false;
    await loadSpeechLexer();
    return shouldSpeak({ mode: config.reply, spokenTo, answer, maxChars: config.tts.max_chars });
  }

  /** The answer as audio for `delivery`, or why not (the text is sent either way). */
  async speak(answer: string, delivery: SpokenDelivery, signal?: AbortSignal): Promise<{ audio: SpokenAudio } | { error: string }> {
    const tts = this.config?.tts;
    await loadSpeechLexer();
    const text = speakableText(answer);
    if (!tts || !this.speaker || text === undefined) return { error: 'nothing to speak' };
    const format = speechFormatFor(delivery, tts.format);
    try {
      const answered = await this.speaker(text, format, signal);
      if (isFormat(answered, format)) return { audio: spokenAudio(answered.data, format) };
      return { audio: spokenAudio(await this.convert(answered.data, format, answered.container, signal), format) };
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      return { error: errorMessage(error) };
    }
  }

  /** A server that ignored response_format: ffmpeg turns its audio into what was asked for, when installed. */
  private async convert(data: Buffer, format: SpeechFormat, got: string, signal?: AbortSignal): Promise<Buffer> {
    const ffmpeg = await findFfmpeg(this.options.ffmpegPath);
    if (!ffmpeg) throw new Error(`the speech endpoint answered ${got} audio instead of ${format}, and ffmpeg is not installed to convert it`);
    const dir = await mkdtemp(join(this.options.tmpDir ?? tmpdir(), 'hob-speech-'));
    try {
      const input = join(dir, `answer.${got}`);
      const output = join(dir, `answer-converted.${TARGET_OF[format]}`);
      await writeFile(input, data);
      await convertAudio(ffmpeg, input, output, TARGET_OF[format], { timeoutMs: 30_000, signal });
      return await readFile(output);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
