import '../support/env.js';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { parseHobConfig } from '../../src/app/channels.js';
import { checkVoice } from '../../src/voice/doctor.js';
import { startFakeSpeech, type FakeSpeech } from '../fakes/speech.js';
import { startFakeTranscription, type FakeTranscription } from '../fakes/transcription.js';
import { hasFfmpeg, tempInbox } from './audio-support.js';

const { root } = tempInbox();
const KEY = 'sk-voice-0123456789';
const mask = (key: string) => `${key.slice(0, 4)}…${key.slice(-2)}`;

let transcription: FakeTranscription | undefined;
let speech: FakeSpeech | undefined;
afterEach(async () => {
  await transcription?.close();
  await speech?.close();
  transcription = speech = undefined;
});

describe('hob doctor on voice', () => {
  it('says voice notes are kept but not transcribed when nothing is configured', async () => {
    const checks = await runDoctor(parseHobConfig(`data_dir: ${root}\n`, { env: {} }), undefined);
    expect(checks.find((check) => check.name === 'voice notes')).toEqual({
      name: 'voice notes',
      ok: true,
      detail: 'not configured: voice notes are kept in the inbox but not transcribed (set voice.base_url to transcribe them)',
    });
  });

  it('proves the transcription and speech endpoints with the key, masked, and says whether ffmpeg is installed', async () => {
    transcription = await startFakeTranscription({ apiKey: KEY });
    speech = await startFakeSpeech({ apiKey: KEY });
    const yaml = `voice:\n  base_url: ${transcription.baseUrl}\n  model: whisper-1\n  tts: { base_url: "${speech.baseUrl}", model: tts-1, voice: alloy }\n`;
    const checks = await checkVoice(parseHobConfig(yaml, { env: { HOB_VOICE_API_KEY: KEY } }).voice, { mask });
    expect(checks.slice(0, 2)).toEqual([
      { name: 'voice notes', ok: true, detail: `${transcription.baseUrl} (whisper-1) transcribes with key sk-v…89` },
      { name: 'spoken answers', ok: true, detail: `${speech.baseUrl} (tts-1, voice alloy) speaks with key sk-v…89 (mp3 audio); reply: when_spoken_to` },
    ]);
    expect(transcription.requests[0]).toMatchObject({ fileName: 'silence.wav', container: 'wav', model: 'whisper-1' });
    expect(checks[2]).toMatchObject({ name: 'ffmpeg', ok: true, detail: hasFfmpeg ? expect.stringMatching(/ with ffprobe: notes in formats the endpoint refuses are converted$/) : expect.stringMatching(/^not installed/) });
  });

  it('fails the check when the endpoint refuses the key, without printing it', async () => {
    transcription = await startFakeTranscription({ apiKey: KEY });
    const wrong = 'sk-wrong-abcdef123456';
    const config = parseHobConfig(`voice: { base_url: "${transcription.baseUrl}", model: whisper-1, api_key: ${wrong} }\n`, { env: {} });
    const [check] = await checkVoice(config.voice, { mask, ffmpegPath: join(root, 'no-ffmpeg') });
    expect(check).toMatchObject({ name: 'voice notes', ok: false, detail: expect.stringContaining('refused the key: 401') });
    expect(check?.detail).toContain('check voice.api_key or HOB_VOICE_API_KEY');
    expect(JSON.stringify(check)).not.toContain(wrong);
  });

  it('says ffmpeg is missing, and what it would do', async () => {
    transcription = await startFakeTranscription();
    const config = parseHobConfig(`voice: { base_url: "${transcription.baseUrl}", model: small }\n`, { env: {} });
    const checks = await checkVoice(config.voice, { mask, ffmpegPath: join(root, 'no-ffmpeg') });
    expect(checks).toEqual([
      { name: 'voice notes', ok: true, detail: `${transcription.baseUrl} (small) transcribes without a key` },
      { name: 'ffmpeg', ok: true, detail: 'not installed: notes in formats the endpoint refuses cannot be converted (install it, e.g. apt-get install ffmpeg)' },
    ]);
  });
});
