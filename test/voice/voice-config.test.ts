import { describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';

const parse = (yaml: string, env: NodeJS.ProcessEnv = {}) => parseHobConfig(yaml, { env });
const problems = (yaml: string, env: NodeJS.ProcessEnv = {}): string => {
  try {
    parse(yaml, env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
};

describe('the voice section', () => {
  it('is absent by default: voice notes are then not transcribed', () => {
    expect(parse('').voice).toBeUndefined();
  });

  it('needs only base_url on OpenAI: the model, its formats and the key come from there', () => {
    const voice = parse('voice: { base_url: "https://api.openai.com/v1/" }', { OPENAI_API_KEY: 'sk-openai' }).voice;
    expect(voice).toMatchObject({
      base_url: 'https://api.openai.com/v1',
      model: 'whisper-1',
      api_key: 'sk-openai',
      max_bytes: 25 * 1024 * 1024,
      max_seconds: 600,
      reply: 'never',
    });
    expect(voice?.formats).toEqual(['flac', 'mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'ogg', 'wav', 'webm']);
    expect(voice?.tts).toBeUndefined();
  });

  it('prefers HOB_VOICE_API_KEY, and never lends OPENAI_API_KEY to another server', () => {
    const env = { OPENAI_API_KEY: 'sk-openai', HOB_VOICE_API_KEY: 'sk-voice' };
    expect(parse('voice: { base_url: "https://api.openai.com/v1" }', env).voice?.api_key).toBe('sk-voice');
    const local = parse('voice: { base_url: "http://localhost:8000/v1", model: small }', { OPENAI_API_KEY: 'sk-openai' }).voice;
    expect(local?.api_key).toBeUndefined();
    expect(local?.formats).toBeUndefined();
  });

  it('treats an unset ${VAR} or an empty api_key as "not set", so the environment fallback applies', () => {
    const unset = parse('voice:\n  base_url: https://api.openai.com/v1\n  api_key: ${MY_VOICE_KEY}\n', { OPENAI_API_KEY: 'sk-openai' }).voice;
    expect(unset?.api_key).toBe('sk-openai');
    const empty = parse('voice:\n  base_url: https://api.openai.com/v1\n  api_key: ""\n', { HOB_VOICE_API_KEY: 'sk-voice' }).voice;
    expect(empty?.api_key).toBe('sk-voice');
  });

  it('asks for the model of a server it does not know, naming the key', () => {
    expect(problems('voice: { base_url: "http://localhost:8000/v1" }')).toMatch(/voice\.model: missing; expected the model name your server transcribes with/);
  });

  it('names a bad endpoint URL and a bad language code', () => {
    const message = problems('voice: { base_url: "localhost:8000", language: english }');
    expect(message).toContain('voice.base_url: expected an http(s) URL');
    expect(message).toContain('voice.language: expected a language code like "en" or "de" (ISO 639-1)');
  });

  it('refuses spoken answers without a speech endpoint', () => {
    expect(problems('voice: { base_url: "https://api.openai.com/v1", reply: always }')).toContain(
      'voice.reply: expected never: spoken answers (always) need voice.tts { base_url, model, voice }',
    );
  });

  it('fills in speech from the transcription endpoint on OpenAI, and answers voice with voice by default', () => {
    const voice = parse('voice:\n  base_url: https://api.openai.com/v1\n  tts: {}\n', { HOB_VOICE_API_KEY: 'sk-voice' }).voice;
    expect(voice?.reply).toBe('when_spoken_to');
    expect(voice?.tts).toEqual({ base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini-tts', voice: 'alloy', api_key: 'sk-voice', format: 'mp3', max_chars: 700 });
  });

  it('lends the transcription key to speech on the same server only', () => {
    const same = parse('voice:\n  base_url: http://localhost:8000/v1\n  model: small\n  api_key: k1\n  tts: { model: kokoro, voice: af_bella }\n').voice;
    expect(same?.tts?.api_key).toBe('k1');
    const other = parse('voice:\n  base_url: http://localhost:8000/v1\n  model: small\n  api_key: k1\n  tts: { base_url: "http://localhost:8880/v1", model: kokoro, voice: af_bella }\n').voice;
    expect(other?.tts?.api_key).toBeUndefined();
  });

  it('asks for the speech model and voice of a server it does not know', () => {
    const message = problems('voice:\n  base_url: http://localhost:8000/v1\n  model: small\n  tts: {}\n');
    expect(message).toContain('voice.tts.model: missing; expected the speech model your server uses');
    expect(message).toContain("voice.tts.voice: missing; expected one of your server's voice names");
  });

  it('never echoes a key written with the wrong shape', () => {
    expect(problems('voice: { base_url: "https://api.openai.com/v1", formats: [ogg, speex] }')).toMatch(/voice\.formats\[1\]: expected one of flac, mp3/);
    const message = problems('voice: { base_url: "https://api.openai.com/v1", api_key: [sk-secret-123], max_seconds: 0 }');
    expect(message).toContain('voice.max_seconds: expected a positive integer');
    expect(message).not.toContain('sk-secret-123');
  });
});
