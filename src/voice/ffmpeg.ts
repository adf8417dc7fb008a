/**
 * ffmpeg and ffprobe, when installed: converting a note the endpoint refuses, measuring one
 * whose container does not say its length. Spawned with an argument list (never a shell),
 * file to file (the audio never passes through hob's memory), under a time limit.
 */
import { spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import type { ConversionTarget } from './formats.js';
import { secondsText } from './measures.js';
import { isExecutableFile } from '../core/executable.js';

export type Ffmpeg = {
  ffmpeg: string;
  /** ffprobe beside it, when installed. */
  ffprobe?: string;
  /** "5.1.9-0+deb12u1", from `ffmpeg -version`. */
  version: string;
};

type RunResult = { code: number | null; stdout: string; stderr: string; timedOut: boolean };

const OUTPUT_LIMIT = 8 * 1024;

/** Runs a program with arguments, keeping the last 8 KB of each output. Never rejects on a missing binary: code null. */
function run(command: string, args: string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<RunResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    const keep = (text: string, chunk: Buffer) => (text + chunk.toString()).slice(-OUTPUT_LIMIT);
    child.stdout.on('data', (chunk: Buffer) => (stdout = keep(stdout, chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr = keep(stderr, chunk)));
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', kill, { once: true });
    if (options.signal?.aborted) kill();
    const finish = (code: number | null) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
      resolve({ code, stdout, stderr, timedOut });
    };
    child.on('error', (error) => {
      stderr = error.message;
      finish(null);
    });
    child.on('close', (code) => finish(code));
  });
}

/** Whether `command` (a path, or a name looked up on PATH) is an executable file: looked up, not run. */
export function isExecutable(command: string): boolean {
  const candidates = command.includes('/') ? [command] : (process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir || '.', command));
  return candidates.some(isExecutableFile);
}

const found = new Map<string, Promise<Ffmpeg | undefined>>();

/**
 * ffmpeg (by default from PATH), asked once per process for its version; undefined when it
 * is not installed. `path` lets tests and `hob doctor` point elsewhere.
 */
export function findFfmpeg(path = 'ffmpeg'): Promise<Ffmpeg | undefined> {
  let result = found.get(path);
  if (!result) {
    result = locate(path);
    found.set(path, result);
  }
  return result;
}

async function locate(path: string): Promise<Ffmpeg | undefined> {
  const version = await run(path, ['-hide_banner', '-version'], { timeoutMs: 10_000 });
  if (version.code !== 0) return undefined;
  const probePath = path.includes('/') ? join(dirname(path), 'ffprobe') : 'ffprobe';
  return {
    ffmpeg: path,
    // Looked up, not run: starting ffprobe costs a quarter second of CPU, and the ffmpeg beside
    // it already answered. One that is there but broken measures nothing, as a missing one.
    ffprobe: isExecutable(probePath) ? probePath : undefined,
    version: /version (\S+)/.exec(version.stdout)?.[1] ?? 'unknown version',
  };
}

/** Speech-friendly settings: mono, 16 kHz for recognition; Opus in Ogg for a voice message. */
const ENCODE: Record<ConversionTarget, string[]> = {
  mp3: ['-ac', '1', '-ar', '16000', '-c:a', 'libmp3lame', '-b:a', '32k', '-f', 'mp3'],
  wav: ['-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', '-f', 'wav'],
  ogg: ['-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg'],
  flac: ['-ac', '1', '-ar', '16000', '-c:a', 'flac', '-f', 'flac'],
  aac: ['-ac', '1', '-c:a', 'aac', '-b:a', '48k', '-f', 'adts'],
};

export class ConversionError extends Error {
  override name = 'ConversionError';
}

/** Converts `input` into `output` (sound only). Throws ConversionError with ffmpeg's last words. */
export async function convertAudio(
  ffmpeg: Ffmpeg,
  input: string,
  output: string,
  to: ConversionTarget,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  // "-nostdin": ffmpeg must never wait on a terminal; "-vn": a video note's picture is dropped;
  // "file:": a path is only ever a local file, never read as an option or another protocol.
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', '-i', `file:${input}`, '-vn', '-map_metadata', '-1', ...ENCODE[to], `file:${output}`];
  const result = await run(ffmpeg.ffmpeg, args, { timeoutMs, signal: options.signal });
  if (result.code === 0) return;
  if (result.timedOut) throw new ConversionError(`ffmpeg took longer than ${secondsText(timeoutMs)} to convert the note`);
  if (options.signal?.aborted) throw new ConversionError('the conversion was stopped');
  const reason = result.stderr.trim().split('\n').pop() || `exit code ${result.code}`;
  throw new ConversionError(`ffmpeg could not convert the note: ${reason}`);
}

/** Seconds of audio per ffprobe, or undefined when it is missing or cannot tell. */
export async function probeSeconds(ffmpeg: Ffmpeg, path: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<number | undefined> {
  if (!ffmpeg.ffprobe) return undefined;
  const result = await run(ffmpeg.ffprobe, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', `file:${path}`], {
    timeoutMs: options.timeoutMs ?? 15_000,
    signal: options.signal,
  });
  const seconds = Number.parseFloat(result.stdout.trim());
  return result.code === 0 && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}
