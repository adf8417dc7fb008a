import '../support/env.js';
import { GENERAL_ID } from '../fakes/discord/index.js';
import type { Person } from '../gateway/channel-contract.js';
import { audioFixture, voiceContract } from '../gateway/voice-contract.js';
import { discordBed } from '../support/discord-testbed.js';

voiceContract('discord (voice messages through discord.js against the fake REST and gateway)', 'audio_file', async () => {
  const bed = await discordBed();
  const { fake } = bed;
  const person = (who: Person) => ({ id: who.id, name: who.name });
  return {
    adapter: bed.adapter,
    groupChatId: GENERAL_ID,
    dmChatId: (who) => fake.dmChannelOf(person(who)),
    noteAudio: audioFixture('voice-note.ogg'),
    voiceNote: (who, where, audio, seconds) => void fake.sayVoice(person(who), where === 'dm' ? fake.dmChannelOf(person(who)) : GENERAL_ID, audio, seconds),
    seen: (chatId) =>
      fake.botMessages(chatId).map((message) => ({
        // As Discord shows it: a backslash before a Markdown character is not shown.
        text: message.content.replace(/\\([\\`*_~|>#-])/g, '$1'),
        ...(message.attachments[0] ? { audio: { bytes: message.attachments[0].bytes, voiceMessage: false } } : {}),
      })),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => bed.close(),
  };
});
