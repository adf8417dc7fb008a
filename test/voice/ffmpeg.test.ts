import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConversionError, convertAudio, findFfmpeg, probeSeconds, type Ffmpeg } from '../../src/voice/ffmpeg.js';
import { sniffContainer } from '../../src/voice/formats.js';
import { silentWav } from '../../src/voice/wav.js';
import { ffmpegSeconds, FIXTURE_SECONDS, fixture, hasFfmpeg, NO_FFMPEG, tempInbox } from './audio-support.js';

const { root } = tempInbox();

describe('finding ffmpeg', () => {
  it('says it is missing rather than failing', async () => {
    expect(await findFfmpeg(join(root, 'no-ffmpeg'))).toBeUndefined();
  });
});

// Each test runs ffmpeg or ffprobe (~0.3 s of CPU each): on a loaded machine one took over 20 s.
describe.skipIf(!hasFfmpeg)(`ffmpeg${hasFfmpeg ? '' : NO_FFMPEG}`, { timeout: 60_000 }, async () => {
  const ffmpeg = (await findFfmpeg()) as Ffmpeg;

  it('is found with its version and ffprobe', () => {
    expect(ffmpeg.version).toMatch(/^\d|^n\d|^N-/);
    expect(ffmpeg.ffprobe).toBe('ffprobe');
  });

  it('is found without ffprobe when none is beside it', async () => {
    const alone = join(root, 'ffmpeg-alone');
    mkdirSync(alone);
    symlinkSync(execFileSync('which', ['ffmpeg']).toString().trim(), join(alone, 'ffmpeg'));
    expect(await findFfmpeg(join(alone, 'ffmpeg'))).toMatchObject({ ffmpeg: join(alone, 'ffmpeg'), ffprobe: undefined });
  });

  it('converts a voice note to mp3, wav, ogg, flac and aac, and measures one without a length header', async () => {
    const formats = ['mp3', 'wav', 'ogg', 'flac', 'aac'] as const;
    const outputs = formats.map((to) => join(root, `note.${to}`));
    await Promise.all(formats.map((to, index) => convertAudio(ffmpeg, fixture('voice-note.ogg'), outputs[index] as string, to)));
    expect(outputs.map((output) => sniffContainer(readFileSync(output)))).toEqual([...formats]);
    // Each the length of the note, as ffmpeg reads them (one run for all five).
    for (const seconds of ffmpegSeconds(outputs)) expect(seconds).toBeCloseTo(FIXTURE_SECONDS, 0);
    expect(await probeSeconds(ffmpeg, join(root, 'note.aac'))).toBeCloseTo(FIXTURE_SECONDS, 0);
  });

  it('reads paths as files only, even one that looks like an option or another protocol', async () => {
    const odd = join(root, '-i concat:x.wav');
    writeFileSync(odd, silentWav(0.2));
    const output = join(root, 'odd.mp3');
    await convertAudio(ffmpeg, odd, output, 'mp3');
    expect(existsSync(output)).toBe(true);
  });

  it('stops at its time limit, with a sentence', async () => {
    const long = join(root, 'long.wav');
    writeFileSync(long, silentWav(300));
    const attempt = convertAudio(ffmpeg, long, join(root, 'long.ogg'), 'ogg', { timeoutMs: 30 });
    await expect(attempt).rejects.toThrow(new ConversionError('ffmpeg took longer than 0.03 s to convert the note'));
  });

  it('passes on what ffmpeg said when it cannot read the input', async () => {
    const garbage = join(root, 'garbage.bin');
    writeFileSync(garbage, 'not audio at all');
    await expect(convertAudio(ffmpeg, garbage, join(root, 'garbage.mp3'), 'mp3')).rejects.toThrow(/^ffmpeg could not convert the note: .*Invalid data found/);
    expect(await probeSeconds(ffmpeg, garbage)).toBeUndefined();
  });
});
