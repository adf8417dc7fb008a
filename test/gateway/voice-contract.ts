import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHobConfig } from '../../src/app/channels.js';
import type { ChannelAdapter, SpokenDelivery } from '../../src/gateway/channel.js';
import { SpokenAnswers } from '../../src/voice/spoken-answers.js';
import { VoiceNotes } from '../../src/voice/voice-notes.js';
import { startFakeSpeech, type FakeSpeech } from '../fakes/speech.js';
import { ScriptedModel } from '../fakes/scripted-model.js';
import { startFakeTranscription, type FakeTranscription } from '../fakes/transcription.js';
import { tempDir } from '../support/engine.js';
import { FRIEND, OWNER, startTestGateway, type TestGateway } from '../support/gateway.js';
import type { Person } from './channel-contract.js';

/** A bot message as a person sees it: its text, and the audio it carries. */
export type SeenVoice = { text: string; audio?: { bytes: Buffer; voiceMessage: boolean } };

/** How the voice contract drives one platform, through the adapter's real client. */
export type VoiceDriver = {
  adapter: ChannelAdapter;
  groupChatId: string;
  dmChatId(person: Person): string;
  /** The platform's own voice note (a voice message, an audio clip), in a DM or in the group without addressing hob. */
  voiceNote(person: Person, where: 'dm' | 'group', audio: Buffer, seconds: number): void;
  /** Audio as this platform records its notes (Ogg/Opus; Slack's clips are M4A). */
  noteAudio: Buffer;
  /** Bot messages in a chat (threads included), as a person sees them now. */
  seen(chatId: string): SeenVoice[];
  waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
};

export const audioFixture = (name: string) => readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url));

const KEY = 'sk-voice-test-9f8e';
const SAID = 'Remind me to call Anna at five.';
const ANSWER = 'Sure, I will remind you to call Anna at five.';

/**
 * Voice notes through the gateway, the same on every platform: heard through the fake
 * transcription server, answered by a scripted model, spoken through the fake speech server.
 */
export function voiceContract(name: string, spokenAs: SpokenDelivery, makeDriver: () => Promise<VoiceDriver>): void {
  describe(`voice notes: ${name}`, () => {
    let driver: VoiceDriver | undefined;
    let hob: TestGateway | undefined;
    let transcription: FakeTranscription | undefined;
    let speech: FakeSpeech | undefined;

    afterEach(async () => {
      await hob?.close();
      await driver?.close();
      await transcription?.close();
      await speech?.close();
      hob = driver = transcription = speech = undefined;
    });

    async function start(model: ScriptedModel, voice: 'transcription' | 'speech' | 'none' = 'transcription') {
      transcription = await startFakeTranscription({ apiKey: KEY });
      speech = await startFakeSpeech({ apiKey: KEY });
      const tts = voice === 'speech' ? `  tts:\n    base_url: ${speech.baseUrl}\n    model: tts-1\n    voice: nova\n` : '';
      const config = voice === 'none' ? undefined : parseHobConfig(`voice:\n  base_url: ${transcription.baseUrl}\n  model: whisper-1\n${tts}`, { env: { HOB_VOICE_API_KEY: KEY } }).voice;
      const dir = tempDir('hob-voice-gw-');
      driver = await makeDriver();
      hob = await startTestGateway(driver.adapter, model, { dir, voice: { notes: new VoiceNotes(config), answers: new SpokenAnswers(config), spokenDir: join(dir, 'spoken') } });
      return { d: driver, dir, transcription, speech };
    }

    const seenText = (d: VoiceDriver, chatId: string, includes: string) =>
      d.waitFor(() => d.seen(chatId).find((message) => message.text.includes(includes)), `a message containing "${includes}"`, 10_000);
    const modelRead = (model: ScriptedModel, index: number) => JSON.stringify(model.requests[index]?.messages.at(-1)?.content ?? []);

    it('a voice note reaches the model as its transcript, and the person sees what was heard', async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, transcription } = await start(model);
      transcription.transcriptFor(d.noteAudio, SAID);
      d.voiceNote(OWNER, 'dm', d.noteAudio, 2);
      await seenText(d, d.dmChatId(OWNER), ANSWER);
      const texts = d.seen(d.dmChatId(OWNER)).map((message) => message.text);
      expect(texts).toContain(`🎤 “${SAID}”`);
      // What was heard shows before the answer, so a mishearing is seen at once.
      expect(texts.indexOf(`🎤 “${SAID}”`)).toBeLessThan(texts.findIndex((text) => text.includes(ANSWER)));
      expect(model.requests).toHaveLength(1);
      expect(modelRead(model, 0)).toContain('[Voice note, 0:02 long, audio kept at inbox/');
      expect(modelRead(model, 0)).toContain(SAID);
      expect(transcription.requests.map((request) => [request.model, request.apiKey])).toEqual([['whisper-1', KEY]]);
    });

    it('a transcript is never taken for a command: "/new" said aloud reaches the model as words', async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, transcription } = await start(model);
      transcription.transcriptFor(d.noteAudio, '/new plan for the week');
      d.voiceNote(OWNER, 'dm', d.noteAudio, 2);
      await seenText(d, d.dmChatId(OWNER), ANSWER);
      expect(model.requests).toHaveLength(1);
      expect(modelRead(model, 0)).toContain(']\\n/new plan for the week');
    });

    it('in a group, a voice note is answered only when what it says names hob', async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, transcription } = await start(model);
      transcription.transcriptFor(d.noteAudio, SAID);
      d.voiceNote(FRIEND, 'group', d.noteAudio, 2);
      await d.waitFor(() => transcription.requests.length === 1, 'the first note heard');
      transcription.transcriptFor(d.noteAudio, `Hob, ${SAID.toLowerCase()}`);
      d.voiceNote(FRIEND, 'group', d.noteAudio, 2);
      await seenText(d, d.groupChatId, ANSWER);
      // One run, for the note that named hob; the first one left no trace in the group.
      expect(model.requests).toHaveLength(1);
      expect(modelRead(model, 0)).toContain('[Bob] [Voice note');
      expect(modelRead(model, 0)).toContain('Hob, remind me');
      expect(d.seen(d.groupChatId).map((message) => message.text)).not.toContain(`🎤 “${SAID}”`);
    });

    it('a failed transcription is said in words, and the note stays in the inbox', async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, dir, transcription } = await start(model);
      transcription.failNext(2, 500);
      d.voiceNote(OWNER, 'dm', d.noteAudio, 2);
      const said = await seenText(d, d.dmChatId(OWNER), "I couldn't transcribe your voice note");
      expect(said.text).toContain("the transcription service isn't answering right now");
      const savedAs = /saved as (inbox\/\S+?)\.(?:\s|$)/.exec(said.text)?.[1];
      expect(savedAs).toBeDefined();
      expect(readFileSync(join(dir, 'workspace', savedAs as string))).toEqual(d.noteAudio);
      expect(model.requests).toHaveLength(0);
    });

    it('without a transcription endpoint, one sentence names voice.base_url and the note is kept', async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, dir } = await start(model, 'none');
      d.voiceNote(OWNER, 'dm', d.noteAudio, 2);
      const said = await seenText(d, d.dmChatId(OWNER), 'voice.base_url');
      const savedAs = /saved as (inbox\/\S+?)\.(?:\s|$)/.exec(said.text)?.[1];
      expect(existsSync(join(dir, 'workspace', savedAs ?? 'missing'))).toBe(true);
      expect(model.requests).toHaveLength(0);
    });

    it(`an answer to a voice note is also spoken, as ${spokenAs === 'voice_message' ? 'a voice message (Ogg/Opus)' : 'an audio file (mp3)'}, beside its text`, async () => {
      const model = new ScriptedModel([{ text: ANSWER }]);
      const { d, transcription, speech } = await start(model, 'speech');
      transcription.transcriptFor(d.noteAudio, SAID);
      d.voiceNote(OWNER, 'dm', d.noteAudio, 2);
      const spoken = await d.waitFor(() => d.seen(d.dmChatId(OWNER)).find((message) => message.audio), 'the spoken answer', 10_000);
      const seen = d.seen(d.dmChatId(OWNER));
      // The text is there, and comes first: the audio is beside it, never instead of it.
      expect(seen.findIndex((message) => message.text.includes(ANSWER))).toBeGreaterThanOrEqual(0);
      expect(seen.findIndex((message) => message.text.includes(ANSWER))).toBeLessThan(seen.findIndex((message) => message.audio));
      expect(spoken.audio?.voiceMessage).toBe(spokenAs === 'voice_message');
      const format = spokenAs === 'voice_message' ? 'opus' : 'mp3';
      expect(speech.requests.map((request) => [request.body.input, request.body.response_format, request.apiKey])).toEqual([[ANSWER, format, KEY]]);
      expect(spoken.audio?.bytes).toEqual(speech.audio(format));
    });
  });
}
