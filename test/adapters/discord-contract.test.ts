import '../support/env.js';
import { GENERAL_ID } from '../fakes/discord/index.js';
import { channelContract, type Person } from '../gateway/channel-contract.js';
import { discordBed } from '../support/discord-testbed.js';

channelContract('discord (discord.js against the fake REST and gateway)', async () => {
  const bed = await discordBed();
  const { fake } = bed;
  const person = (who: Person) => ({ id: who.id, name: who.name });
  return {
    adapter: bed.adapter,
    maxLength: 2000,
    groupChatId: GENERAL_ID,
    dmChatId: (who) => fake.dmChannelOf(person(who)),
    dm: (who, text) => void fake.dm(person(who), text),
    group: (who, text, { mention }) => void fake.say(person(who), GENERAL_ID, mention ? `<@${bed.adapter.botId}> ${text}` : text),
    seen: (chatId) => fake.botMessages(chatId).map((message) => ({ id: message.id, text: message.content, buttons: message.buttons.flat() })),
    press: (who, _chatId, messageId, label) => {
      const button = fake.messages.find((message) => message.id === messageId)?.buttons.flat().find((entry) => entry.label === label);
      if (!button) throw new Error(`no button ${label} on message ${messageId}`);
      fake.press(person(who), messageId, button.customId);
    },
    notices: (who) => fake.noticesFor(person(who)),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => bed.close(),
  };
});
