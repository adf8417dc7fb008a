import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptionError, transcriptionClient, type TranscriptionSettings } from '../../src/voice/transcribe.js';
import { startFakeTranscription, type FakeTranscription, type FakeTranscriptionOptions } from '../fakes/transcription.js';
import { fixture } from './audio-support.js';

const NOTE = { path: fixture('voice-note.ogg'), fileName: 'voice.ogg', mimeType: 'audio/ogg' };
const KEY = 'sk-test-5f0c2e9d71';

let fake: FakeTranscription | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(options: FakeTranscriptionOptions = {}, settings: Partial<TranscriptionSettings> = {}) {
  fake = await startFakeTranscription({ apiKey: KEY, ...options });
  return transcriptionClient({ baseUrl: fake.baseUrl, model: 'whisper-1', apiKey: KEY, timeoutMs: 5_000, ...settings });
}

async function failure(promise: Promise<unknown>): Promise<TranscriptionError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof TranscriptionError)) throw new Error(`expected a TranscriptionError, got ${String(error)}`);
  return error;
}

describe('the transcription client', () => {
  it('uploads the note with its model and language and reads the JSON transcript and length', async () => {
    const transcribe = await client({}, { language: 'en' });
    fake?.transcriptFor(readFileSync(NOTE.path), 'Remind me to call Anna at five.', 2.03);
    expect(await transcribe(NOTE)).toEqual({ text: 'Remind me to call Anna at five.', durationSeconds: 3 });
    expect(fake?.requests).toEqual([
      expect.objectContaining({ apiKey: KEY, model: 'whisper-1', language: 'en', responseFormat: 'json', fileName: 'voice.ogg', contentType: 'audio/ogg', container: 'ogg', bytes: readFileSync(NOTE.path).length }),
    ]);
  });

  it('reads a plain-text answer', async () => {
    const transcribe = await client({ transcript: 'Buy milk.' }, { responseFormat: 'text' });
    expect(await transcribe(NOTE)).toEqual({ text: 'Buy milk.' });
    expect(fake?.requests[0]?.responseFormat).toBe('text');
    expect(fake?.requests[0]?.language).toBeUndefined();
  });

  it('sends no Authorization header to a server without a key', async () => {
    fake = await startFakeTranscription({ accepts: 'any' });
    const transcribe = transcriptionClient({ baseUrl: fake.baseUrl, model: 'small', timeoutMs: 5_000 });
    await transcribe(NOTE);
    expect(fake.requests[0]?.apiKey).toBeUndefined();
  });

  it('says a file is too large on a 413', async () => {
    const transcribe = await client({ maxBytes: 1_000 });
    const error = await failure(transcribe(NOTE));
    expect(error.reason).toBe('too_big');
    expect(error.message).toMatch(/refused the file as too large: 413 Maximum content size limit \(1000\) exceeded/);
  });

  it('tries once more after a 500, and reports the second', async () => {
    const transcribe = await client({ transcript: 'second time lucky' });
    fake?.failNext(1);
    expect((await transcribe(NOTE)).text).toBe('second time lucky');
    fake?.failNext(2, 503);
    const error = await failure(transcribe(NOTE));
    expect(error).toMatchObject({ reason: 'unavailable', status: 503 });
    expect(error.message).toContain('503 The server had an error while processing your request');
  });

  it('names a refused key without showing it', async () => {
    fake = await startFakeTranscription({ apiKey: KEY });
    const wrong = 'sk-wrong-0a1b2c3d4e5f';
    const error = await failure(transcriptionClient({ baseUrl: fake.baseUrl, model: 'whisper-1', apiKey: wrong, timeoutMs: 5_000 })(NOTE));
    expect(error).toMatchObject({ reason: 'key', status: 401 });
    expect(error.message).toContain('check voice.api_key or HOB_VOICE_API_KEY');
    expect(error.message).not.toContain(wrong);
  });

  it('stops waiting at the time limit', async () => {
    const transcribe = await client({ delayMs: 2_000 }, { timeoutMs: 300 });
    const error = await failure(transcribe(NOTE));
    expect(error.reason).toBe('timeout');
    expect(error.message).toMatch(/\(whisper-1\) did not answer within 0\.3 s$/);
  });

  it('says when the endpoint cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(transcriptionClient({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'small', timeoutMs: 2_000 })(NOTE));
    expect(error.reason).toBe('unavailable');
    expect(error.message).toMatch(/could not be reached: .*ECONNREFUSED/);
  });

  it('refuses to follow a redirect (a POST body would have to be kept whole to send again), and says where to point', async () => {
    const redirecting = http.createServer((req, res) => {
      req.resume();
      res.writeHead(308, { location: 'https://elsewhere.example/v1/audio/transcriptions' });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const { port } = redirecting.address() as AddressInfo;
    try {
      const error = await failure(transcriptionClient({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'small', timeoutMs: 2_000 })(NOTE));
      expect(error.reason).toBe('rejected');
      expect(error.message).toContain(`http://127.0.0.1:${port}/v1/audio/transcriptions redirects elsewhere; set the base_url to where it redirects`);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });

  it('recognises a refused format in OpenAI, FastAPI and whisper.cpp words', async () => {
    for (const errorStyle of ['openai', 'fastapi', 'whisper.cpp'] as const) {
      const transcribe = await client({ accepts: ['wav'], judgeBy: errorStyle === 'whisper.cpp' ? 'content' : 'extension', errorStyle });
      const error = await failure(transcribe(NOTE));
      expect(error.reason, errorStyle).toBe('format');
      expect(error.message, errorStyle).toMatch(errorStyle === 'whisper.cpp' ? /failed to read audio data/ : /Invalid file format\. Supported formats: \['wav'\]/);
      await fake?.close();
      fake = undefined;
    }
  });

  it('passes on any other refusal with the server\'s words', async () => {
    const transcribe = await client({}, { language: 'english' });
    const error = await failure(transcribe(NOTE));
    expect(error).toMatchObject({ reason: 'rejected', status: 400 });
    expect(error.message).toContain("Invalid language 'english'. Language parameter must be specified in ISO-639-1 format.");
  });

  it('rejects with the abort when the run is stopped', async () => {
    const transcribe = await client({ delayMs: 2_000 });
    const controller = new AbortController();
    const pending = transcribe(NOTE, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
