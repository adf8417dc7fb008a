import type { ChannelCapabilities } from '../../src/gateway/channel.js';
import { MemoryChannel } from '../fakes/memory-channel.js';
import { channelContract } from './channel-contract.js';

const streamingModes: NonNullable<ChannelCapabilities['streaming']>[] = ['none', 'draft', 'native'];

for (const streaming of streamingModes) {
  channelContract(`in-memory channel (streaming: ${streaming})`, async () => {
    const channel = new MemoryChannel({ maxMessageLength: 500, streaming });
    return {
      adapter: channel,
      maxLength: 500,
      groupChatId: 'group-1',
      dmChatId: (person) => `dm-${person.id}`,
      dm: (person, text) => channel.say(person, text),
      group: (person, text, { mention }) => channel.say(person, text, { chatId: 'group-1', chatType: 'group', mention }),
      seen: (chatId) => channel.chat(chatId),
      press: (person, chatId, messageId, label) => {
        const message = channel.chat(chatId).find((entry) => entry.id === messageId);
        if (!message) throw new Error(`no message ${messageId} in ${chatId}`);
        channel.press(person, message, label);
      },
      notices: (person) => channel.answers.filter((answer) => answer.userId === person.id).map((answer) => answer.text ?? ''),
      waitFor: (probe, what, timeoutMs) => channel.waitFor(probe, timeoutMs, what),
      close: async () => undefined,
      liveText: (chatId) => channel.drafts.get(chatId),
      refuseLiveFinish: () => void (channel.refuseLiveFinish = true),
    };
  });
}
