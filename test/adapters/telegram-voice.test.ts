import '../support/env.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';
import { SpokenAnswers } from '../../src/voice/spoken-answers.js';
import { VoiceNotes } from '../../src/voice/voice-notes.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { startFakeTranscription } from '../fakes/transcription.js';
import { tempDir } from '../support/engine.js';
import { startTestGateway } from '../support/gateway.js';
import { fixture, hasFfmpeg, NO_FFMPEG } from '../voice/audio-support.js';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import type { Person } from '../gateway/channel-contract.js';
import { audioFixture, voiceContract } from '../gateway/voice-contract.js';

const GROUP = { id: -1001, type: 'supergroup' as const, title: 'Team' };

voiceContract('telegram (voice notes through grammy against the fake Bot API)', 'voice_message', async () => {
  const fake = await startFakeTelegram({ botUsername: 'hob_bot' });
  const adapter = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, draftIntervalMs: 50, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  const user = (person: Person) => ({ id: Number(person.id), first_name: person.name });
  return {
    adapter,
    groupChatId: String(GROUP.id),
    dmChatId: (person) => person.id,
    noteAudio: audioFixture('voice-note.ogg'),
    voiceNote: (person, where, audio, seconds) => void fake.sendVoice(user(person), where === 'dm' ? { id: Number(person.id), type: 'private' } : GROUP, audio, seconds),
    seen: (chatId) =>
      fake.chat(Number(chatId)).filter((message) => !message.deleted).map((message) => ({
        text: message.text,
        ...(message.file && (message.kind === 'voice' || message.kind === 'audio' || message.kind === 'document') ? { audio: { bytes: message.file.bytes, voiceMessage: message.kind === 'voice' } } : {}),
      })),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => fake.close(),
  };
});

describe('telegram: audio files and video notes are heard too', () => {
  const SAID = 'Remind me to call Anna at five.';
  const ANN = { id: 100, first_name: 'Ann' };
  const DM = { id: 100, type: 'private' as const };
  let close: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of close.reverse()) await step();
    close = [];
  });

  async function start() {
    const fake = await startFakeTelegram({ botUsername: 'hob_bot' });
    // Audio it was not told about (a video note's sound, converted here) is heard as SAID too.
    const transcription = await startFakeTranscription({ transcript: SAID });
    const config = parseHobConfig(`voice:\n  base_url: ${transcription.baseUrl}\n  model: whisper-1\n`, { env: {} }).voice;
    const adapter = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    const model = new ScriptedModel([{ text: 'Noted.' }]);
    const dir = tempDir('hob-voice-tg-');
    const hob = await startTestGateway(adapter, model, { dir, voice: { notes: new VoiceNotes(config), answers: new SpokenAnswers(config), spokenDir: join(dir, 'spoken') } });
    close.push(() => fake.close(), () => transcription.close(), () => hob.close());
    const heard = () => fake.waitFor(() => fake.chat(DM.id).find((message) => message.text === `🎤 “${SAID}”`), 8000, 'the 🎤 line');
    return { fake, transcription, model, heard };
  }

  it('an audio file (M4A) with a caption: the model reads the caption, then the transcript', async () => {
    const { fake, transcription, model, heard } = await start();
    const audio = audioFixture('voice-note.m4a');
    transcription.transcriptFor(audio, SAID);
    fake.sendAudio(ANN, DM, audio, 'memo.m4a', 2, 'from this morning');
    await heard();
    await fake.waitFor(() => model.requests.length === 1, 8000, 'the model asked');
    const read = JSON.stringify(model.requests[0]?.messages.at(-1)?.content);
    expect(read).toContain('from this morning\\n[Voice note, 0:02 long, audio kept at inbox/');
    expect(read).toContain(SAID);
    expect(transcription.requests[0]?.container).toBe('m4a');
  });

  it.skipIf(!hasFfmpeg)(`a video note: only its sound is sent to be transcribed${hasFfmpeg ? '' : NO_FFMPEG}`, async () => {
    const { fake, transcription, heard } = await start();
    // A round video (H.264 picture, AAC sound) as Telegram delivers one: test/fixtures/audio.
    fake.sendVideoNote(ANN, DM, readFileSync(fixture('video-note.mp4')), 2);
    await heard();
    // Only the sound went up, converted by ffmpeg: never the video.
    expect(transcription.requests).toHaveLength(1);
    expect(['mp3', 'wav']).toContain(transcription.requests[0]?.container);
  });
});
