import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';
import { VoiceNotes, type Heard } from '../../src/voice/voice-notes.js';
import { silentWav } from '../../src/voice/wav.js';
import { startFakeTranscription, type FakeTranscription, type FakeTranscriptionOptions } from '../fakes/transcription.js';
import { espeakWav, fixture, hasEspeak, hasFfmpeg, NO_ESPEAK, NO_FFMPEG, tempInbox } from './audio-support.js';

const inbox = tempInbox();
const NO_SUCH_FFMPEG = join(inbox.root, 'no-ffmpeg-here');
const SAID = 'Remind me to call Anna at five.';

let fake: FakeTranscription | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A voice section as config.yaml would hold it, pointed at a fresh fake. */
async function voiceNotes(yaml = '', options: FakeTranscriptionOptions = {}, ffmpegPath?: string): Promise<VoiceNotes> {
  fake = await startFakeTranscription({ apiKey: 'sk-voice', ...options });
  const config = parseHobConfig(`voice:\n  base_url: ${fake.baseUrl}\n  model: whisper-1\n${yaml}`, { env: { HOB_VOICE_API_KEY: 'sk-voice' } });
  return new VoiceNotes(config.voice, { ffmpegPath, tmpDir: inbox.root });
}

const openaiFormats = '  formats: [flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm]\n';

function heard(result: Heard): Extract<Heard, { heard: true }> {
  if (!result.heard) throw new Error(`not heard: ${result.why}: ${result.forPerson} ${result.detail ?? ''}`);
  return result;
}

describe('a voice note, heard', () => {
  it('reaches the model as a framed transcript and the person as a 🎤 line (a Telegram .oga goes up as .ogg)', async () => {
    const notes = await voiceNotes(openaiFormats);
    fake?.transcriptFor(readFileSync(fixture('voice-note.ogg')), SAID);
    const note = inbox.save('voice-note.ogg', '1733-file_12.oga');
    const result = heard(await notes.hear({ ...note, declaredSeconds: 2 }));
    expect(result.transcript).toBe(SAID);
    expect(result.forPerson).toBe(`🎤 “${SAID}”`);
    expect(result.forModel).toBe(
      '[Voice note, 0:02 long, audio kept at inbox/1733-file_12.oga. What follows is a speech-to-text transcript of what the person said: ' +
        'answer it as their message; words may be misheard, so ask when something seems off.]\n' +
        SAID,
    );
    expect(result.forModel.startsWith('/')).toBe(false);
    expect(fake?.requests.map((request) => [request.fileName, request.model])).toEqual([['voice.ogg', 'whisper-1']]);
  });

  it('sends the configured language', async () => {
    const notes = await voiceNotes('  language: de\n');
    heard(await notes.hear(inbox.save('voice-note.ogg', 'de.ogg')));
    expect(fake?.requests[0]?.language).toBe('de');
  });

  it('says so when nothing was heard', async () => {
    const notes = await voiceNotes('', { transcript: '  ' });
    const result = await notes.hear(inbox.save('voice-note.ogg', 'quiet.ogg'));
    expect(result).toMatchObject({ heard: false, why: 'nothing_said', forPerson: "I couldn't make out any words in your voice note (saved as inbox/quiet.ogg). Could you say it again, or type it?" });
  });

  it('is heard when it is speech sent like a Telegram voice note (espeak-ng speech in Ogg/Opus)', async () => {
    // test/fixtures/audio/README.md: made once by espeak-ng and ffmpeg, as a Telegram client records one.
    const { path, savedAs } = inbox.save('calendar.oga', 'calendar.oga');
    const notes = await voiceNotes(openaiFormats);
    fake?.transcriptFor(readFileSync(path), 'What is on my calendar tomorrow?');
    const result = heard(await notes.hear({ path, savedAs }));
    expect(result.forPerson).toBe('🎤 “What is on my calendar tomorrow?”');
    expect(fake?.requests[0]).toMatchObject({ fileName: 'voice.ogg', container: 'ogg' });
  });
});

describe('a voice note, not heard', () => {
  it('without a voice section: one sentence naming voice.base_url, and the file stays', async () => {
    const note = inbox.save('voice-note.ogg', 'unconfigured.ogg');
    const result = await new VoiceNotes(undefined).hear(note);
    expect(result).toMatchObject({ heard: false, why: 'not_configured' });
    expect(result.forPerson).toContain("I can't listen to voice notes yet: voice notes need voice.base_url in hob's config");
    expect(result.forPerson).toContain('saved as inbox/unconfigured.ogg');
    expect(existsSync(note.path)).toBe(true);
  });

  it('past the length limit, read from the file itself, without uploading it', async () => {
    const notes = await voiceNotes('  max_seconds: 1\n');
    const result = await notes.hear({ ...inbox.save('voice-note.ogg', 'long.ogg'), declaredSeconds: 1 });
    expect(result).toMatchObject({ heard: false, why: 'too_long', forPerson: 'Your voice note is 0:02 long; I can transcribe notes up to 0:01. It is saved as inbox/long.ogg. Please send a shorter one, or type it.' });
    expect(fake?.requests).toEqual([]);
  });

  it('past the size limit, without uploading it', async () => {
    const notes = await voiceNotes('  max_bytes: 2048\n');
    const result = await notes.hear(inbox.save('voice-note.ogg', 'big.ogg'));
    expect(result).toMatchObject({ heard: false, why: 'too_big', forPerson: 'Your voice note is 5 KB; I can transcribe notes up to 2 KB. It is saved as inbox/big.ogg. Please send a shorter one, or type it.' });
    expect(fake?.requests).toEqual([]);
  });

  it('before downloading, from what the platform says', async () => {
    const notes = await voiceNotes('  max_seconds: 600\n  max_bytes: 20971520\n');
    expect(notes.beforeDownload({ sizeBytes: 31_457_280 })).toBe('Your voice note is 30 MB; I can transcribe notes up to 20 MB. Please send a shorter one, or type it.');
    expect(notes.beforeDownload({ declaredSeconds: 842 })).toBe('Your voice note is 14:02 long; I can transcribe notes up to 10:00. Please send a shorter one, or type it.');
    expect(notes.beforeDownload({ sizeBytes: 40_000, declaredSeconds: 12 })).toBeUndefined();
  });

  it('when the service fails twice: said in words, details for the log, the file kept, no temp files left', async () => {
    const notes = await voiceNotes();
    fake?.failNext(2);
    const note = inbox.save('voice-note.ogg', 'down.ogg');
    const result = await notes.hear(note);
    expect(result).toMatchObject({
      heard: false,
      why: 'unavailable',
      forPerson: "I couldn't transcribe your voice note: the transcription service isn't answering right now. It is saved as inbox/down.ogg. Please try again in a moment, or type it.",
      detail: expect.stringContaining('500 The server had an error'),
    });
    expect(existsSync(note.path)).toBe(true);
    expect(readdirSync(inbox.root).filter((name) => name.startsWith('hob-voice-'))).toEqual([]);
  });

  it('in a format the service refuses, without ffmpeg: said in words, nothing uploaded', async () => {
    const notes = await voiceNotes(openaiFormats, {}, NO_SUCH_FFMPEG);
    const result = await notes.hear(inbox.save('voice-note.aac', 'clip.aac'));
    expect(result).toMatchObject({ heard: false, why: 'format', detail: 'the transcription service does not take AAC audio and ffmpeg is not installed to convert it' });
    expect(result.forPerson).toContain("doesn't take this audio format, and hob could not convert it (that needs ffmpeg)");
    expect(fake?.requests).toEqual([]);
  });

  it('rejects with the abort when the run is stopped', async () => {
    const notes = await voiceNotes('', { delayMs: 2_000 });
    const controller = new AbortController();
    const pending = notes.hear(inbox.save('voice-note.ogg', 'stopped.ogg'), controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe.skipIf(!hasFfmpeg)(`a voice note converted with ffmpeg${hasFfmpeg ? '' : NO_FFMPEG}`, () => {
  it('turns AAC, which OpenAI refuses, into mp3 before sending', async () => {
    const notes = await voiceNotes(openaiFormats);
    heard(await notes.hear(inbox.save('voice-note.aac', 'clip.aac')));
    expect(fake?.requests.map((request) => [request.fileName, request.container])).toEqual([['voice.mp3', 'mp3']]);
  });

  it('learns that a server reads only WAV (whisper.cpp): one refusal, then every note converted up front', async () => {
    const notes = await voiceNotes('', { accepts: ['wav'], judgeBy: 'content', errorStyle: 'whisper.cpp', transcript: SAID });
    expect(heard(await notes.hear(inbox.save('voice-note.ogg', 'first.ogg'))).transcript).toBe(SAID);
    expect(heard(await notes.hear(inbox.save('voice-note.ogg', 'second.ogg'))).transcript).toBe(SAID);
    expect(fake?.requests.map((request) => request.container)).toEqual(['ogg', 'wav', 'wav']);
    expect(readdirSync(inbox.root).filter((name) => name.startsWith('hob-voice-'))).toEqual([]);
  });

  it('measures a container without a length header with ffprobe', async () => {
    const notes = await voiceNotes('  max_seconds: 1\n');
    const result = await notes.hear(inbox.save('voice-note.m4a', 'memo.m4a'));
    expect(result).toMatchObject({ heard: false, why: 'too_long', forPerson: expect.stringContaining('Your voice note is 0:02 long') });
  });

  it('sends only the sound of a video note', async () => {
    const { path: video, savedAs } = inbox.save('video-note.mp4', 'round.mp4');
    const notes = await voiceNotes(openaiFormats);
    heard(await notes.hear({ path: video, savedAs, hasVideo: true }));
    expect(fake?.requests[0]).toMatchObject({ fileName: 'voice.mp3', container: 'mp3' });
    expect(fake?.requests[0]?.bytes).toBeLessThan(readFileSync(video).length);
  });

  it('stops converting when the run is stopped, and leaves no temporary files', async () => {
    const notes = await voiceNotes('  formats: [ogg]\n');
    const long = join(inbox.inbox, 'long.wav');
    writeFileSync(long, silentWav(300));
    const controller = new AbortController();
    const pending = notes.hear({ path: long, savedAs: 'inbox/long.wav' }, controller.signal);
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake?.requests).toEqual([]);
    expect(readdirSync(inbox.root).filter((name) => name.startsWith('hob-voice-'))).toEqual([]);
  });

  it('says a conversion failed in words', async () => {
    const notes = await voiceNotes(openaiFormats);
    const broken = join(inbox.inbox, 'garbage.bin');
    // An unknown container, for an endpoint with a list of formats, goes to ffmpeg, which cannot read it.
    writeFileSync(broken, Buffer.from('definitely not audio, just words'));
    const failed = await notes.hear({ path: broken, savedAs: 'inbox/garbage.bin' });
    expect(failed).toMatchObject({ heard: false, why: 'conversion', detail: expect.stringContaining('ffmpeg could not convert the note') });
    expect(failed.forPerson).toContain("the audio couldn't be converted to a format the transcription service takes");
  });
});

describe.skipIf(!hasEspeak)(`a spoken note made by espeak-ng${hasEspeak ? '' : NO_ESPEAK}`, () => {
  it('is measured from its WAV header and sent as it is', async () => {
    const path = espeakWav(SAID, join(inbox.inbox, 'spoken.wav'));
    const notes = await voiceNotes('  language: en\n');
    fake?.transcriptFor(readFileSync(path), SAID);
    const result = heard(await notes.hear({ path, savedAs: 'inbox/spoken.wav' }));
    expect(result.transcript).toBe(SAID);
    expect(result.seconds).toBeCloseTo((readFileSync(path).length - 44) / 44_100, 2);
    expect(fake?.requests[0]).toMatchObject({ fileName: 'voice.wav', container: 'wav', language: 'en' });
  });
});
