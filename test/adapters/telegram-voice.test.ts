import '../support/env.js';
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
