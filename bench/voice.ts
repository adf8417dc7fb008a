/**
 * What a voice note costs hob beyond the transcription endpoint's own time:
 * - its own work per note before and after the upload (size, container, length from the
 *   header, the upload plan, the frame for the model and the 🎤 line), on a 2-second
 *   Telegram-style Ogg/Opus note;
 * - the whole `hear()` against a loopback endpoint that answers at once (adds the multipart
 *   upload over loopback);
 * - an ffmpeg conversion of a 30-second note, when ffmpeg is installed (only notes the
 *   endpoint refuses pay it);
 * - memory while a 10-minute note (a 19 MB WAV, the largest form it takes) is sent: the peak
 *   resident growth, sampled every 2 ms, against the file's size;
 * - through the gateway (the in-memory channel, an instant model): a voice note against a
 *   text message from the same person, from the message to the answer handed to the channel;
 *   the voice note's extra time less a bare upload of the note is what hob adds to a message
 *   for being spoken (download, inbox, hearing, the 🎤 line, the frame) — the endpoint's own
 *   time left out. And the same for a 10-minute note's memory: the platform's download is a
 *   buffer, so the gateway holds the note once while it is saved.
 * The endpoint runs in a child process, so its own buffering is not counted.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, mkdtempSync, openAsBlob, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHobConfig } from '../src/app/channels.js';
import { readNoteFacts } from '../src/voice/duration.js';
import { convertAudio, findFfmpeg } from '../src/voice/ffmpeg.js';
import { planUpload } from '../src/voice/formats.js';
import { VoiceNotes, type VoiceNote } from '../src/voice/voice-notes.js';
import { wavHeader } from '../src/voice/wav.js';
import { heardLine, transcriptForModel } from '../src/voice/words.js';
import { SpokenAnswers } from '../src/voice/spoken-answers.js';
import type { Attachment, OutboundMessage } from '../src/gateway/channel.js';
import { MemoryChannel } from '../test/fakes/memory-channel.js';
import { startFakeTranscription } from '../test/fakes/transcription.js';
import { startTestGateway } from '../test/support/gateway.js';
import { InstantModel } from './instant-model.js';
import { collectGarbage, fmt, fmtBytes, median, percentile, runIfMain, type BenchResult } from './stats.js';

const NOTE = fileURLToPath(new URL('../test/fixtures/audio/voice-note.ogg', import.meta.url));
const ROUNDS = 300;
const WARMUP = 30;
const MB = 1024 * 1024;

/** The endpoint, in its own process: prints its base URL, then serves until killed. */
async function serve(): Promise<void> {
  const fake = await startFakeTranscription({ accepts: 'any', transcript: 'Remind me to call Anna at five.' });
  process.send?.(fake.baseUrl);
}

function startEndpoint(): Promise<{ baseUrl: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (baseUrl) => resolve({ baseUrl: String(baseUrl), child }));
    child.once('error', reject);
  });
}

/** hob's own steps for one note, in the order `hear` takes them, without the upload. */
async function ownWork(note: VoiceNote): Promise<number> {
  const started = performance.now();
  const { container, seconds } = await readNoteFacts(note.path);
  planUpload({ container, accepts: undefined, refused: new Set(), ffmpeg: false, originalName: 'voice.oga' });
  transcriptForModel({ transcript: 'Remind me to call Anna at five.', seconds, savedAs: note.savedAs });
  heardLine('Remind me to call Anna at five.');
  return performance.now() - started;
}

function writeTenMinuteWav(path: string): number {
  const dataBytes = 600 * 16_000 * 2;
  const fd = openSync(path, 'w');
  writeSync(fd, wavHeader(dataBytes));
  // Low noise rather than silence, in 1 MB slices: never the whole file in memory here either.
  const slice = Buffer.alloc(MB);
  for (let i = 0; i < slice.length; i += 2) slice.writeInt16LE(((i * 7919) % 257) - 128, i);
  for (let written = 0; written < dataBytes; written += slice.length) writeSync(fd, slice, 0, Math.min(slice.length, dataBytes - written));
  closeSync(fd);
  return 44 + dataBytes;
}

const GATEWAY_ROUNDS = 200;

/** Peak growth of RSS (every 2 ms) and of the live set (heap + buffers right after a GC, every 20 ms) while `work` runs. */
async function peakMemory(work: () => Promise<void>): Promise<{ rss: number; peakRss: number; live: number; after: number; samples: number }> {
  collectGarbage();
  const before = process.memoryUsage();
  const live = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const liveBefore = before.heapUsed + before.arrayBuffers;
  let peakRss = before.rss;
  let peakLive = liveBefore;
  let samples = 0;
  // A copy of the file held anywhere shows in the live set; garbage RSS has not given back does not.
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    if (++samples % 10 === 0 && collectGarbage()) peakLive = Math.max(peakLive, live());
  }, 2);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  collectGarbage();
  return { rss: peakRss - before.rss, peakRss, live: peakLive - liveBefore, after: live() - liveBefore, samples };
}

const signed = (delta: number) => `${delta < 0 ? '−' : '+'}${fmtBytes(Math.abs(delta))}`;

/** A voice note and a text message through the gateway, alternately, each timed to its answer. */
async function throughTheGateway(baseUrl: string, dir: string, bareMs: number, tenMinutes: string): Promise<string[]> {
  const channel = new MemoryChannel();
  const config = parseHobConfig(`voice: { base_url: "${baseUrl}", model: whisper-1 }\n`, { env: {} }).voice;
  const hob = await startTestGateway(channel, new InstantModel(), {
    tools: [],
    dir: mkdtempSync(join(dir, 'gateway-')),
    voice: { notes: new VoiceNotes(config, { tmpDir: dir }), answers: new SpokenAnswers(config), spokenDir: join(dir, 'spoken') },
  });
  const person = { id: '100', name: 'Ann' };
  let answered: (() => void) | undefined;
  let started = 0;
  let heardAt = 0;
  channel.onSend = (_target: unknown, message: OutboundMessage) => {
    if (message.text.startsWith('🎤')) heardAt = performance.now() - started;
    if (message.text === 'Done.') answered?.();
  };
  const answer = (send: () => void) =>
    new Promise<number>((resolve) => {
      started = performance.now();
      answered = () => resolve(performance.now() - started);
      send();
    });
  const note = readFileSync(NOTE);
  const voiceNote = (bytes: Buffer | (() => Promise<Buffer>), seconds: number): Attachment => ({
    kind: 'voice',
    download: typeof bytes === 'function' ? bytes : async () => bytes,
    mimeType: 'audio/ogg',
    durationSeconds: seconds,
  });
  try {
    const text: number[] = [];
    const voice: number[] = [];
    const heard: number[] = [];
    for (let i = 0; i < WARMUP + GATEWAY_ROUNDS; i++) {
      const textMs = await answer(() => channel.say(person, 'Remind me to call Anna at five.'));
      const voiceMs = await answer(() => channel.say(person, '', { attachments: [voiceNote(note, 2)] }));
      if (i >= WARMUP) {
        text.push(textMs);
        voice.push(voiceMs);
        heard.push(heardAt);
      }
      channel.chats.clear();
    }
    const overhead = median(voice) - median(text) - bareMs;
    const lines = [
      `through the gateway (instant model, loopback endpoint): a text message ${fmt(median(text))} ms, the same words as a 2 s voice note ${fmt(median(voice))} ms (p99 ${fmt(percentile(voice, 0.99))} ms); ` +
        `the 🎤 line shows after ${fmt(median(heard))} ms (download, inbox, transcription); ` +
        `less the bare upload (${fmt(bareMs)} ms) a voice note costs hob ${fmt(overhead)} ms more than a text (${GATEWAY_ROUNDS} of each)`,
    ];
    const tenMinuteNote = voiceNote(() => Promise.resolve(readFileSync(tenMinutes)), 600);
    const memory = await peakMemory(async () => void (await answer(() => channel.say(person, '', { attachments: [tenMinuteNote] }))));
    lines.push(
      `10-minute note through the gateway (the platform's download is a buffer of the whole note, saved to the inbox, then streamed up from disk): ` +
        `peak RSS ${signed(memory.rss)}, live heap + buffers at most ${signed(memory.live)} (${memory.samples} samples), ${signed(memory.after)} after`,
    );
    return lines;
  } finally {
    await hob.close();
  }
}

async function run(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hob-bench-voice-'));
  const { baseUrl, child } = await startEndpoint();
  const summary: string[] = [];
  try {
    const notePath = join(dir, 'voice.oga');
    copyFileSync(NOTE, notePath);
    const note: VoiceNote = { path: notePath, savedAs: 'inbox/voice.oga', declaredSeconds: 2 };

    const own: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const ms = await ownWork(note);
      if (i >= WARMUP) own.push(ms);
    }
    summary.push(`voice note, hob's own work (size, container, length from the Ogg header, upload plan, frame, 🎤 line): median ${fmt(median(own) * 1000)} µs, p99 ${fmt(percentile(own, 0.99) * 1000)} µs (${ROUNDS} notes)`);

    const config = parseHobConfig(`voice: { base_url: "${baseUrl}", model: whisper-1 }\n`, { env: {} });
    const notes = new VoiceNotes(config.voice, { tmpDir: dir });
    // The same upload by hand (one multipart POST, nothing else) is the endpoint's and the
    // network's share; hob's overhead is what `hear` takes beyond it. They take turns.
    const whole: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      let started = performance.now();
      const heard = await notes.hear(note);
      if (!heard.heard) throw new Error(heard.forPerson);
      if (i >= WARMUP) whole.push(performance.now() - started);
      started = performance.now();
      const form = new FormData();
      form.append('file', await openAsBlob(notePath, { type: 'audio/ogg' }), 'voice.ogg');
      form.append('model', 'whisper-1');
      await (await fetch(`${baseUrl}/audio/transcriptions`, { method: 'POST', body: form })).text();
      if (i >= WARMUP) bare.push(performance.now() - started);
    }
    summary.push(
      `voice note heard end to end, instant loopback endpoint (2 s Ogg/Opus, 4.6 KB): median ${fmt(median(whole))} ms, p99 ${fmt(percentile(whole, 0.99))} ms; ` +
        `a bare upload of the same file ${fmt(median(bare))} ms → hob adds ${fmt(median(whole) - median(bare))} ms (${ROUNDS} notes)`,
    );

    const bareMs = median(bare);

    const ffmpeg = await findFfmpeg();
    if (ffmpeg) {
      const thirty = join(dir, 'thirty.ogg');
      await convertAudio(ffmpeg, NOTE, join(dir, 'seed.wav'), 'wav');
      const { execFileSync } = await import('node:child_process');
      execFileSync(ffmpeg.ffmpeg, ['-nostdin', '-loglevel', 'error', '-y', '-stream_loop', '14', '-i', join(dir, 'seed.wav'), '-c:a', 'libopus', '-b:a', '24k', thirty]);
      const conversions: number[] = [];
      for (let i = 0; i < 7; i++) {
        const started = performance.now();
        await convertAudio(ffmpeg, thirty, join(dir, `converted-${i}.mp3`), 'mp3');
        if (i >= 2) conversions.push(performance.now() - started);
      }
      summary.push(`ffmpeg conversion of a 30 s Ogg/Opus note to 16 kHz mp3 (only for formats the endpoint refuses): median ${fmt(median(conversions))} ms (5 runs)`);
    } else {
      summary.push('ffmpeg conversion: not measured (ffmpeg is not installed)');
    }

    const big = join(dir, 'ten-minutes.wav');
    const bytes = writeTenMinuteWav(big);
    let heardBig = false;
    const memory = await peakMemory(async () => {
      heardBig = (await notes.hear({ path: big, savedAs: 'inbox/ten-minutes.wav' })).heard;
    });
    if (!heardBig) throw new Error('the 10-minute note was not heard');
    summary.push(
      `10-minute note (${fmtBytes(bytes)} WAV, length from its header, streamed from disk): peak RSS ${fmtBytes(memory.peakRss)} (${signed(memory.rss)}), ` +
        `live heap + buffers at most ${signed(memory.live)} while sending (${memory.samples} samples), ${signed(memory.after)} after`,
    );

    summary.push(...(await throughTheGateway(baseUrl, dir, bareMs, big)));
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  for (const line of summary) console.log(line);
  return { name: 'voice', summary };
}

if (process.argv[2] === 'serve') void serve();
else runIfMain(import.meta.url, run);
