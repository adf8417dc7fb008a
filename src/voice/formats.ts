/**
 * What a voice note is (by its first bytes, never by its name: a chat app may call Ogg/Opus
 * ".oga", which OpenAI refuses although it takes the same bytes as ".ogg") and how it goes
 * to an endpoint: as it is, under the right name, or converted by ffmpeg first.
 */
import type { AudioExtension } from '../config/voice-schema.js';

export type AudioContainer = 'ogg' | 'wav' | 'mp3' | 'flac' | 'm4a' | 'mp4' | 'webm' | 'aac' | 'amr' | 'caf' | '3gp' | 'unknown';

const ascii = (bytes: Uint8Array, start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end));

/** The container of an audio file from its first 16 bytes or more. */
export function sniffContainer(head: Uint8Array): AudioContainer {
  if (ascii(head, 0, 4) === 'OggS') return 'ogg';
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WAVE') return 'wav';
  if (ascii(head, 0, 4) === 'fLaC') return 'flac';
  if (ascii(head, 0, 3) === 'ID3') return 'mp3';
  if (ascii(head, 0, 5) === '#!AMR') return 'amr';
  if (ascii(head, 0, 4) === 'caff') return 'caf';
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'webm';
  if (ascii(head, 4, 8) === 'ftyp') {
    const brand = ascii(head, 8, 12);
    if (brand.startsWith('M4A') || brand.startsWith('M4B')) return 'm4a';
    if (brand.startsWith('3g')) return '3gp';
    return 'mp4';
  }
  // An MPEG audio frame starts with 11 set bits; layer bits 00 mean ADTS (AAC), others MP3.
  const first = head[0] ?? 0;
  const second = head[1] ?? 0;
  if (first === 0xff && (second & 0xe0) === 0xe0) return (second & 0x06) === 0 ? 'aac' : 'mp3';
  return 'unknown';
}

const MIME: Record<AudioContainer, string> = {
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'audio/webm',
  aac: 'audio/aac',
  amr: 'audio/amr',
  caf: 'audio/x-caf',
  '3gp': 'audio/3gpp',
  unknown: 'application/octet-stream',
};

export function mimeTypeOf(container: AudioContainer): string {
  return MIME[container];
}

/** What ffmpeg makes when an endpoint refuses a format. */
export type ConversionTarget = 'mp3' | 'wav' | 'ogg' | 'flac' | 'aac';

/** How a note goes to the endpoint. */
export type UploadPlan =
  | { action: 'send'; fileName: string; mimeType: string }
  | { action: 'convert'; to: ConversionTarget; why: string }
  | { action: 'refuse'; why: string };

export type PlanInput = {
  container: AudioContainer;
  /** The endpoint's formats (`voice.formats`); undefined: it takes anything. */
  accepts: readonly AudioExtension[] | undefined;
  /** Containers this endpoint refused earlier (learned, so a refusal costs one round trip). */
  refused: ReadonlySet<AudioContainer>;
  ffmpeg: boolean;
  /** A video note: only its sound needs to travel. */
  hasVideo?: boolean;
  /** The saved file's name, used when the container is unknown and sent as is. */
  originalName: string;
};

/**
 * The plan for one note. A known container under its proper extension when the endpoint
 * takes it; otherwise conversion when ffmpeg is here; otherwise a refusal in words, except
 * for an unknown container, which is tried as it is (the endpoint may know it).
 */
export function planUpload(input: PlanInput): UploadPlan {
  const { container, accepts, refused, ffmpeg } = input;
  const extension = container === 'unknown' ? undefined : container;
  const name = extension === undefined || refused.has(container) ? undefined : acceptedName(extension, accepts);
  if (input.hasVideo && ffmpeg) return { action: 'convert', to: conversionTarget(accepts), why: 'only the sound of a video note is sent' };
  if (name !== undefined) return { action: 'send', fileName: `voice.${name}`, mimeType: mimeTypeOf(container) };
  if (ffmpeg) return { action: 'convert', to: conversionTarget(accepts), why: `the endpoint does not take ${describe(container)}` };
  if (container === 'unknown' && !refused.has('unknown')) return { action: 'send', fileName: input.originalName, mimeType: mimeTypeOf(container) };
  return { action: 'refuse', why: `the transcription service does not take ${describe(container)} and ffmpeg is not installed to convert it` };
}

/** The extension to send a container under, if the endpoint takes it (Ogg goes by any of its names). */
function acceptedName(extension: string, accepts: readonly AudioExtension[] | undefined): string | undefined {
  if (accepts === undefined) return extension;
  const names: readonly string[] = extension === 'ogg' ? ['ogg', 'oga'] : [extension];
  return names.find((candidate) => (accepts as readonly string[]).includes(candidate));
}

/**
 * mp3 when taken (small, and what every hosted endpoint reads); WAV 16 kHz mono otherwise,
 * the one format every local server reads (whisper.cpp's server reads nothing else).
 */
export function conversionTarget(accepts: readonly AudioExtension[] | undefined): ConversionTarget {
  if (accepts === undefined) return 'wav';
  for (const target of ['mp3', 'wav', 'ogg', 'flac'] as const) if (accepts.includes(target)) return target;
  return 'wav';
}

export const CONTAINER_OF_TARGET: Record<ConversionTarget, AudioContainer> = { mp3: 'mp3', wav: 'wav', ogg: 'ogg', flac: 'flac', aac: 'aac' };

function describe(container: AudioContainer): string {
  return container === 'unknown' ? 'this audio format' : `${container.toUpperCase()} audio`;
}
