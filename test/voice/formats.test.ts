import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPENAI_AUDIO_FORMATS } from '../../src/config/voice-schema.js';
import { readNoteFacts } from '../../src/voice/duration.js';
import { planUpload, sniffContainer, type AudioContainer } from '../../src/voice/formats.js';
import { silentWav, wavHeader } from '../../src/voice/wav.js';
import { espeakWav, ffprobeSeconds, FIXTURE_SECONDS, fixture, hasEspeak, hasFfmpeg, NO_ESPEAK, NO_FFMPEG, tempInbox } from './audio-support.js';

const { root } = tempInbox();
const none = new Set<AudioContainer>();
const secondsOf = async (path: string) => (await readNoteFacts(path)).seconds;

describe('what a note is, by its bytes', () => {
  it.each([
    ['voice-note.ogg', 'ogg'],
    ['voice-note.m4a', 'm4a'],
    ['voice-note.mp3', 'mp3'],
    ['voice-note.aac', 'aac'],
    ['okay.flac', 'flac'],
  ])('%s is %s', (name, container) => {
    expect(sniffContainer(readFileSync(fixture(name)))).toBe(container);
  });

  it('reads a WAV and calls anything else unknown', () => {
    expect(sniffContainer(silentWav(0.1))).toBe('wav');
    expect(sniffContainer(Buffer.from('<html>not audio</html>'))).toBe('unknown');
    expect(sniffContainer(Buffer.alloc(0))).toBe('unknown');
  });
});

describe('how a note goes to the endpoint', () => {
  const openai = OPENAI_AUDIO_FORMATS;

  it('sends a Telegram voice note (Ogg/Opus, named .oga) to OpenAI as voice.ogg, unconverted', () => {
    expect(planUpload({ container: 'ogg', accepts: openai, refused: none, ffmpeg: false, originalName: 'file_7.oga' })).toEqual({ action: 'send', fileName: 'voice.ogg', mimeType: 'audio/ogg' });
  });

  it('converts what OpenAI refuses to mp3 when ffmpeg is here, and says so in words when it is not', () => {
    expect(planUpload({ container: 'aac', accepts: openai, refused: none, ffmpeg: true, originalName: 'a.aac' })).toMatchObject({ action: 'convert', to: 'mp3' });
    const refused = planUpload({ container: 'amr', accepts: openai, refused: none, ffmpeg: false, originalName: 'a.amr' });
    expect(refused).toEqual({ action: 'refuse', why: 'the transcription service does not take AMR audio and ffmpeg is not installed to convert it' });
  });

  it('converts to 16 kHz WAV for a server that takes only WAV (whisper.cpp), or one that refused the note before', () => {
    expect(planUpload({ container: 'ogg', accepts: ['wav'], refused: none, ffmpeg: true, originalName: 'v.ogg' })).toMatchObject({ action: 'convert', to: 'wav' });
    expect(planUpload({ container: 'ogg', accepts: undefined, refused: new Set(['ogg']), ffmpeg: true, originalName: 'v.ogg' })).toMatchObject({ action: 'convert', to: 'wav' });
  });

  it('tries an unknown container as it is when nothing can convert it: the server may know it', () => {
    expect(planUpload({ container: 'unknown', accepts: openai, refused: none, ffmpeg: false, originalName: 'memo.opus' })).toEqual({ action: 'send', fileName: 'memo.opus', mimeType: 'application/octet-stream' });
  });

  it('sends only the sound of a video note when ffmpeg can take it out, else the video as it is', () => {
    expect(planUpload({ container: 'mp4', accepts: openai, refused: none, ffmpeg: true, hasVideo: true, originalName: 'v.mp4' })).toMatchObject({ action: 'convert', to: 'mp3' });
    expect(planUpload({ container: 'mp4', accepts: openai, refused: none, ffmpeg: false, hasVideo: true, originalName: 'v.mp4' })).toMatchObject({ action: 'send', fileName: 'voice.mp4' });
  });
});

describe('how long a note is, from its header', () => {
  it('reads size and container in the same open', async () => {
    expect(await readNoteFacts(fixture('voice-note.m4a'))).toEqual({ bytes: readFileSync(fixture('voice-note.m4a')).length, container: 'm4a' });
  });

  it('reads a Telegram-style Ogg/Opus note from its last granule position', async () => {
    expect(await secondsOf(fixture('voice-note.ogg'))).toBeCloseTo(FIXTURE_SECONDS, 1);
  });

  it('reads a WAV from its data size, also one written to a pipe that never filled the size in', async () => {
    const plain = join(root, 'three-and-a-half.wav');
    writeFileSync(plain, silentWav(3.5));
    expect(await secondsOf(plain)).toBe(3.5);
    const streamed = join(root, 'streamed.wav');
    const header = wavHeader(0);
    header.writeUInt32LE(0xffffffff, 40);
    writeFileSync(streamed, Buffer.concat([header, Buffer.alloc(16_000 * 2 * 2)]));
    expect(await secondsOf(streamed)).toBe(2);
  });

  it('says nothing (rather than a wrong length) for a container without a cheap header, or a broken file', async () => {
    expect(await secondsOf(fixture('voice-note.m4a'))).toBeUndefined();
    const broken = join(root, 'broken.ogg');
    writeFileSync(broken, Buffer.concat([Buffer.from('OggS'), Buffer.alloc(20, 0xff)]));
    expect(await secondsOf(broken)).toBeUndefined();
  });

  it('reads the length of a 10-minute WAV without reading the file', async () => {
    const path = join(root, 'ten-minutes.wav');
    const fd = openSync(path, 'w');
    const dataBytes = 600 * 16_000 * 2;
    writeSync(fd, wavHeader(dataBytes));
    writeSync(fd, Buffer.alloc(1), 0, 1, 44 + dataBytes - 1);
    closeSync(fd);
    expect(await secondsOf(path)).toBe(600);
  });

  it.skipIf(!hasEspeak)(`reads espeak-ng's own WAV${hasEspeak ? '' : NO_ESPEAK}`, async () => {
    const path = espeakWav('The quick brown fox jumps over the lazy dog.', join(root, 'fox.wav'));
    const seconds = await secondsOf(path);
    // espeak-ng writes 22,050 Hz mono 16-bit: 44,100 bytes a second after a 44-byte header.
    expect(seconds).toBeCloseTo((readFileSync(path).length - 44) / 44_100, 3);
  });

  it('reads long Ogg/Opus (from the tail: over 64 KB) and Ogg/Vorbis files', async () => {
    // Sine tones made by ffmpeg once (test/fixtures/audio/README.md), 70.5 s and 3.25 s long.
    const opus = fixture('long-sine.ogg');
    expect(statSync(opus).size).toBeGreaterThan(64 * 1024);
    expect(await secondsOf(opus)).toBeCloseTo(70.5, 1);
    expect(await secondsOf(fixture('sine-vorbis.ogg'))).toBeCloseTo(3.25, 1);
  });

  it.skipIf(!hasFfmpeg)(`agrees with ffprobe on a long Ogg/Opus file${hasFfmpeg ? '' : NO_FFMPEG}`, async () => {
    const opus = fixture('long-sine.ogg');
    expect(await secondsOf(opus)).toBeCloseTo(ffprobeSeconds(opus), 1);
  });
});
