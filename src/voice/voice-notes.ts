/**
 * Hearing a voice note, start to end: limits, what the file is, conversion when the
 * endpoint refuses it, the transcription, and the words for the model and the person. The
 * gateway calls `beforeDownload` with what the platform says about the file, and `hear`
 * once it is saved in the inbox. Neither throws (except the AbortError of a stopped run):
 * every failure comes back as a sentence for the person and a detail for the log.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { VoiceConfig } from '../config/voice-schema.js';
import { errorMessage } from '../core/errors.js';
import { readNoteFacts } from './duration.js';
import { ConversionError, convertAudio, findFfmpeg, probeSeconds, type Ffmpeg } from './ffmpeg.js';
import { CONTAINER_OF_TARGET, conversionTarget, mimeTypeOf, planUpload, type AudioContainer, type ConversionTarget } from './formats.js';
import { TranscriptionError, transcriptionClient, type Transcriber, type Transcript } from './transcribe.js';
import { failedSentence, heardLine, notConfiguredSentence, nothingHeardSentence, tooBigSentence, tooLongSentence, transcriptForModel, type FailureWhy } from './words.js';

/** A note saved in the inbox. */
export type VoiceNote = {
  /** The saved file, absolute. */
  path: string;
  /** How the model and the person are told where it is: "inbox/1733-voice.ogg". */
  savedAs: string;
  /** The length the platform reports for the note, if it does. */
  declaredSeconds?: number;
  /** A video note: only its sound is sent when ffmpeg can take it out. */
  hasVideo?: boolean;
};

export type Heard =
  | {
      heard: true;
      transcript: string;
      seconds?: number;
      /** The user message's text for the model (frame + transcript). */
      forModel: string;
      /** "🎤 …", shown with the answer or in the progress message. */
      forPerson: string;
    }
  | {
      heard: false;
      why: 'not_configured' | 'too_big' | 'too_long' | 'nothing_said' | FailureWhy;
      /** One sentence for the chat; the note is kept. */
      forPerson: string;
      /** For the log (with the session key); never holds a key. */
      detail?: string;
    };

export type VoiceNotesOptions = {
  /** ffmpeg to use; default: `ffmpeg` on PATH. Tests point it at a missing file. */
  ffmpegPath?: string;
  /** Where converted copies live while they are sent; default: the system's temp directory. */
  tmpDir?: string;
};

const CONVERSION_TIMEOUT_MS = 120_000;

type Endpoint = { config: VoiceConfig; transcribe: Transcriber };

export class VoiceNotes {
  private readonly endpoint: Endpoint | undefined;
  /** Containers this endpoint refused: converted up front from then on. */
  private readonly refused = new Set<AudioContainer>();

  constructor(
    config: VoiceConfig | undefined,
    private readonly options: VoiceNotesOptions = {},
  ) {
    this.endpoint = config && {
      config,
      transcribe: transcriptionClient({ baseUrl: config.base_url, model: config.model, apiKey: config.api_key, language: config.language, timeoutMs: config.timeout_seconds * 1000 }),
    };
  }

  get configured(): boolean {
    return this.endpoint !== undefined;
  }

  /**
   * A sentence when what the platform says about a note is already past the limits (then it
   * need not be downloaded for transcription; it may still be kept), else undefined.
   */
  beforeDownload(facts: { sizeBytes?: number; declaredSeconds?: number }): string | undefined {
    const config = this.endpoint?.config;
    if (!config) return undefined;
    if (facts.sizeBytes !== undefined && facts.sizeBytes > config.max_bytes) return tooBigSentence(facts.sizeBytes, config.max_bytes);
    if (facts.declaredSeconds !== undefined && Math.round(facts.declaredSeconds) > config.max_seconds) return tooLongSentence(facts.declaredSeconds, config.max_seconds);
    return undefined;
  }

  /** Transcribes a saved note. Resolves with what was heard or why not; rejects only when `signal` aborts. */
  async hear(note: VoiceNote, signal?: AbortSignal): Promise<Heard> {
    const endpoint = this.endpoint;
    if (!endpoint) return { heard: false, why: 'not_configured', forPerson: notConfiguredSentence(note.savedAs) };
    const { config } = endpoint;
    try {
      const facts = await readNoteFacts(note.path);
      if (facts.bytes > config.max_bytes) return { heard: false, why: 'too_big', forPerson: tooBigSentence(facts.bytes, config.max_bytes, note.savedAs) };
      let ffmpeg: Promise<Ffmpeg | undefined> | undefined;
      // Looked up only when needed: most notes are sent as they are.
      const ffmpegNow = () => (ffmpeg ??= findFfmpeg(this.options.ffmpegPath));
      let seconds = facts.seconds ?? note.declaredSeconds;
      const prober = seconds === undefined ? await ffmpegNow() : undefined;
      if (prober) seconds = await probeSeconds(prober, note.path, { signal });
      if (seconds !== undefined && Math.round(seconds) > config.max_seconds) {
        return { heard: false, why: 'too_long', forPerson: tooLongSentence(seconds, config.max_seconds, note.savedAs) };
      }
      const transcript = await this.send(endpoint, note, facts.container, ffmpegNow, signal);
      if (!transcript.text) return { heard: false, why: 'nothing_said', forPerson: nothingHeardSentence(note.savedAs) };
      const length = seconds ?? transcript.durationSeconds;
      return {
        heard: true,
        transcript: transcript.text,
        seconds: length,
        forModel: transcriptForModel({ transcript: transcript.text, seconds: length, savedAs: note.savedAs }),
        forPerson: heardLine(transcript.text),
      };
    } catch (error) {
      // Whatever broke while the run was being stopped, the stop is what the caller must see.
      if (signal?.aborted) throw signal.reason ?? error;
      const why: FailureWhy = error instanceof TranscriptionError ? error.reason : error instanceof ConversionError ? 'conversion' : 'unavailable';
      return { heard: false, why, forPerson: failedSentence(why, note.savedAs), detail: errorMessage(error) };
    }
  }

  /** Sends the note as it is or converted; a format refusal of the original is learned and answered by one conversion. */
  private async send(endpoint: Endpoint, note: VoiceNote, container: AudioContainer, ffmpegNow: () => Promise<Ffmpeg | undefined>, signal?: AbortSignal): Promise<Transcript> {
    const accepts = endpoint.config.formats;
    const plan = (ffmpeg: boolean) => planUpload({ container, accepts, refused: this.refused, ffmpeg, hasVideo: note.hasVideo, originalName: basename(note.path) });
    const withoutFfmpeg = plan(false);
    const ffmpeg = note.hasVideo || withoutFfmpeg.action !== 'send' ? await ffmpegNow() : undefined;
    const chosen = ffmpeg ? plan(true) : withoutFfmpeg;
    if (chosen.action === 'refuse') throw new TranscriptionError(chosen.why, 'format');
    if (chosen.action === 'convert' && ffmpeg) return this.sendConverted(endpoint, note, chosen.to, ffmpeg, signal);
    if (chosen.action !== 'send') throw new TranscriptionError(`the note cannot be sent: ${chosen.why}`, 'format');
    try {
      return await endpoint.transcribe({ path: note.path, fileName: chosen.fileName, mimeType: chosen.mimeType }, signal);
    } catch (error) {
      if (!(error instanceof TranscriptionError) || error.reason !== 'format') throw error;
      this.refused.add(container);
      const converter = await ffmpegNow();
      if (!converter) throw error;
      return this.sendConverted(endpoint, note, conversionTarget(accepts), converter, signal);
    }
  }

  /** Converts into a temporary directory, sends, and removes it whatever happens. */
  private async sendConverted(endpoint: Endpoint, note: VoiceNote, to: ConversionTarget, ffmpeg: Ffmpeg, signal?: AbortSignal): Promise<Transcript> {
    const dir = await mkdtemp(join(this.options.tmpDir ?? tmpdir(), 'hob-voice-'));
    try {
      const converted = join(dir, `voice.${to}`);
      await convertAudio(ffmpeg, note.path, converted, to, { timeoutMs: CONVERSION_TIMEOUT_MS, signal });
      return await endpoint.transcribe({ path: converted, fileName: `voice.${to}`, mimeType: mimeTypeOf(CONTAINER_OF_TARGET[to]) }, signal);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
