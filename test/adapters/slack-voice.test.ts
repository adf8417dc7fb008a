import '../support/env.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import type { Person } from '../gateway/channel-contract.js';
import { audioFixture, voiceContract } from '../gateway/voice-contract.js';
import { slackAdapter } from '../support/slack-testbed.js';

const CHANNEL = 'C0TEAM';

voiceContract('slack (audio clips through Bolt over Socket Mode against the fake Slack)', 'audio_file', async () => {
  const fake = await startFakeSlack();
  const adapter = slackAdapter(fake);
  const known = (person: Person) => fake.person(person);
  return {
    adapter,
    groupChatId: CHANNEL,
    dmChatId: (person) => dmOf(person.id),
    // Slack's mobile clips: M4A, named audio/mp4.
    noteAudio: audioFixture('voice-note.m4a'),
    voiceNote: (person, where, audio, seconds) =>
      void fake.audioClip(known(person), audio, seconds * 1000, { mimetype: 'audio/mp4', ...(where === 'group' ? { channel: CHANNEL } : {}) }),
    seen: (chatId) =>
      fake.seen(chatId).map((message) => ({
        text: message.text,
        ...(message.files?.[0] ? { audio: { bytes: message.files[0].bytes, voiceMessage: false } } : {}),
      })),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => fake.close(),
  };
});
