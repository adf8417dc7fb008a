import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';
import { sniffContainer } from '../../src/voice/formats.js';
import { loadSpeechLexer, shouldSpeak, speakableText } from '../../src/voice/speech.js';
import { SpokenAnswers } from '../../src/voice/spoken-answers.js';
import { startFakeSpeech, type FakeSpeech, type FakeSpeechOptions } from '../fakes/speech.js';
import { hasFfmpeg, NO_FFMPEG, tempInbox } from './audio-support.js';

const { root } = tempInbox();
const KEY = 'sk-speech-77aa11bb';

let fake: FakeSpeech | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function spokenAnswers(yaml = '', options: FakeSpeechOptions = {}, ffmpegPath?: string): Promise<SpokenAnswers> {
  fake = await startFakeSpeech({ apiKey: KEY, ...options });
  const config = parseHobConfig(
    `voice:\n  base_url: http://127.0.0.1:9/v1\n  model: small\n  timeout_seconds: 5\n  tts:\n    base_url: ${fake.baseUrl}\n    model: tts-1\n    voice: nova\n${yaml}`,
    { env: { HOB_VOICE_API_KEY: KEY } },
  );
  return new SpokenAnswers(config.voice, { ffmpegPath, tmpDir: root });
}

// marked's lexer loads once an answer may be spoken (speech.ts); these read answers directly.
beforeAll(() => loadSpeechLexer());

describe('which answers are spoken', () => {
  const short = 'Done: I will remind you to call Anna at five.';
  it.each([
    ['never', true, short, false],
    ['when_spoken_to', true, short, true],
    ['when_spoken_to', false, short, false],
    ['always', false, short, true],
    ['always', true, 'Run this:\n\n```sh\nls -la\n```', false],
    ['always', true, '| a | b |\n| - | - |\n| 1 | 2 |', false],
    ['always', true, 'word '.repeat(200), false],
  ] as const)('reply: %s, spoken to: %s → %s… spoken: %s', (mode, spokenTo, answer, spoken) => {
    expect(shouldSpeak({ mode, spokenTo, answer, maxChars: 700 })).toBe(spoken);
  });

  it('reads the words, not the Markdown', () => {
    expect(speakableText('**Done.** See [the docs](https://example.com) and `npm test`.\n\n- milk\n- eggs')).toBe('Done. See the docs and npm test.\nmilk\neggs');
    expect(speakableText('Fish &amp; chips')).toBe('Fish & chips');
  });

  it('follows the config: no tts means never', async () => {
    const config = parseHobConfig('voice: { base_url: "http://127.0.0.1:9/v1", model: small }', { env: {} });
    expect(await new SpokenAnswers(config.voice).wants('Hi!', true)).toBe(false);
    expect(await (await spokenAnswers()).wants('Hi!', true)).toBe(true);
    expect(await (await spokenAnswers('    max_chars: 3\n')).wants('Hi there!', true)).toBe(false);
  });
});

describe('a spoken answer', () => {
  it('is Ogg/Opus for a voice message, asked of the endpoint with the model, voice and plain text', async () => {
    const answers = await spokenAnswers();
    const result = await answers.speak('**Done.** I will remind you.', 'voice_message');
    if (!('audio' in result)) throw new Error(result.error);
    expect(result.audio).toMatchObject({ format: 'opus', fileName: 'answer.ogg', mimeType: 'audio/ogg' });
    expect(sniffContainer(result.audio.data)).toBe('ogg');
    expect(result.audio.data.subarray(28, 36).toString('latin1')).toBe('OpusHead');
    expect(fake?.requests).toEqual([{ apiKey: KEY, body: { model: 'tts-1', voice: 'nova', input: 'Done. I will remind you.', response_format: 'opus' } }]);
  });

  it('is the configured format for an audio file', async () => {
    const answers = await spokenAnswers('    format: flac\n');
    const result = await answers.speak('Okay.', 'audio_file');
    if (!('audio' in result)) throw new Error(result.error);
    expect(result.audio).toMatchObject({ format: 'flac', fileName: 'answer.flac', mimeType: 'audio/flac' });
    expect(sniffContainer(result.audio.data)).toBe('flac');
  });

  it('fails in words, never by throwing, and without the key', async () => {
    const answers = await spokenAnswers();
    fake?.failNext(2);
    expect(await answers.speak('Okay.', 'audio_file')).toEqual({ error: expect.stringContaining('500 The server had an error') });
    const config = parseHobConfig(`voice:\n  base_url: http://127.0.0.1:9/v1\n  model: small\n  tts: { base_url: "${fake?.baseUrl}", model: tts-1, voice: nova, api_key: sk-wrong-123456 }\n`, { env: {} });
    const refused = await new SpokenAnswers(config.voice).speak('Okay.', 'audio_file');
    expect(refused).toEqual({ error: expect.stringContaining('401 Incorrect API key provided') });
    expect(JSON.stringify(refused)).not.toContain('sk-wrong-123456');
    expect(JSON.stringify(refused)).toContain('check voice.tts.api_key');
  });

  it('from a server that ignores response_format, without ffmpeg: an error, so the answer stays text', async () => {
    const answers = await spokenAnswers('', { answerAs: 'mp3' }, `${root}/no-ffmpeg`);
    expect(await answers.speak('Okay.', 'voice_message')).toEqual({ error: 'the speech endpoint answered mp3 audio instead of opus, and ffmpeg is not installed to convert it' });
  });

  it.skipIf(!hasFfmpeg)(`from a server that ignores response_format, with ffmpeg: converted to Ogg/Opus${hasFfmpeg ? '' : NO_FFMPEG}`, async () => {
    const answers = await spokenAnswers('', { answerAs: 'mp3' });
    const result = await answers.speak('Okay.', 'voice_message');
    if (!('audio' in result)) throw new Error(result.error);
    expect(result.audio.fileName).toBe('answer.ogg');
    expect(result.audio.data.subarray(28, 36).toString('latin1')).toBe('OpusHead');
  });
});
