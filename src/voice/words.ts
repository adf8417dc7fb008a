/**
 * Every sentence about a voice note: the frame the model reads around a transcript, the
 * "🎤 …" line the person sees, and what the person is told when a note is not heard. Each
 * names where the audio is kept, so nothing the person said is lost.
 */
import { clock, size } from './measures.js';
import type { TranscriptionFailure } from './transcribe.js';

/**
 * What the model reads for a voice note: a bracketed frame first (so a transcript that
 * begins with "/stop" is never taken for a command), then the person's words as heard.
 */
export function transcriptForModel(input: { transcript: string; seconds?: number; savedAs: string }): string {
  const length = input.seconds === undefined ? '' : `, ${clock(input.seconds)} long`;
  return (
    `[Voice note${length}, audio kept at ${input.savedAs}. What follows is a speech-to-text transcript of what the person said: ` +
    `answer it as their message; words may be misheard, so ask when something seems off.]\n${input.transcript}`
  );
}

const HEARD_CHARS = 240;

/** The line the person sees with the answer, so a mishearing can be corrected: 🎤 "Remind me…". */
export function heardLine(transcript: string): string {
  const flat = transcript.replace(/\s+/g, ' ').trim();
  if (flat.length <= HEARD_CHARS) return `🎤 “${flat}”`;
  const cut = flat.slice(0, HEARD_CHARS - 1);
  const atWord = cut.lastIndexOf(' ');
  return `🎤 “${(atWord > HEARD_CHARS * 0.6 ? cut.slice(0, atWord) : cut).trimEnd()}…”`;
}

/** No `voice` section: the note stays saved; the owner knows what to configure. */
export function notConfiguredSentence(savedAs: string): string {
  return (
    `I can't listen to voice notes yet: voice notes need voice.base_url in hob's config (any OpenAI-compatible ` +
    `transcription endpoint, e.g. OpenAI, Groq or a local whisper server). Your note is saved as ${savedAs}.`
  );
}

export function tooLongSentence(seconds: number, maxSeconds: number, savedAs?: string): string {
  const kept = savedAs ? ` It is saved as ${savedAs}.` : '';
  return `Your voice note is ${clock(seconds)} long; I can transcribe notes up to ${clock(maxSeconds)}.${kept} Please send a shorter one, or type it.`;
}

export function tooBigSentence(bytes: number, maxBytes: number, savedAs?: string): string {
  const kept = savedAs ? ` It is saved as ${savedAs}.` : '';
  return `Your voice note is ${size(bytes)}; I can transcribe notes up to ${size(maxBytes)}.${kept} Please send a shorter one, or type it.`;
}

export function nothingHeardSentence(savedAs: string): string {
  return `I couldn't make out any words in your voice note (saved as ${savedAs}). Could you say it again, or type it?`;
}

/** Why a transcription failed, in words for the person; the details go to the log. */
export type FailureWhy = TranscriptionFailure | 'conversion';

const FAILURE: Record<FailureWhy, string> = {
  too_big: 'the transcription service says the file is too large',
  format: "the transcription service doesn't take this audio format, and hob could not convert it (that needs ffmpeg)",
  key: "the transcription service refused hob's API key (the owner needs to check voice.api_key)",
  timeout: 'the transcription service took too long to answer',
  unavailable: "the transcription service isn't answering right now",
  rejected: 'the transcription service refused it',
  conversion: "the audio couldn't be converted to a format the transcription service takes",
};

export function failedSentence(why: FailureWhy, savedAs: string): string {
  const retry = why === 'timeout' || why === 'unavailable' ? 'Please try again in a moment, or type it.' : 'Please type it instead.';
  return `I couldn't transcribe your voice note: ${FAILURE[why]}. It is saved as ${savedAs}. ${retry}`;
}
