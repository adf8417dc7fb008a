/**
 * Lengths, sizes and time limits as a person reads them. Shared by the sentences about a
 * voice note (words.ts) and by the error messages of the endpoint, ffmpeg and transcription
 * clients (whose failure kinds words.ts puts in sentences): so they sit apart from both.
 */

/** 42 → "0:42", 3725 → "1:02:05". */
export function clock(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

/** A time limit in words: 30 → "0.03 s", 300 → "0.3 s", 180000 → "180 s". */
export function secondsText(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 1_000 ? 2 : ms < 10_000 ? 1 : 0))} s`;
}

/** 26214400 → "25 MB", 900000 → "879 KB". */
export function size(bytes: number): string {
  if (bytes >= 1024 * 1024) {
    const mb = bytes / 1024 / 1024;
    return `${mb >= 10 ? Math.round(mb) : Math.round(mb * 10) / 10} MB`;
  }
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}
