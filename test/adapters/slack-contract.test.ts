import '../support/env.js';
import { startFakeSlack } from '../fakes/slack/index.js';
import { dmOf } from '../fakes/slack/web-api.js';
import { channelContract, type Person } from '../gateway/channel-contract.js';
import { slackAdapter } from '../support/slack-testbed.js';

const CHANNEL = 'C0TEAM';

channelContract('slack (Bolt over Socket Mode against the fake Slack)', async () => {
  const fake = await startFakeSlack();
  const adapter = slackAdapter(fake);
  const known = (person: Person) => fake.person(person);
  return {
    adapter,
    maxLength: 3000,
    groupChatId: CHANNEL,
    dmChatId: (person) => dmOf(person.id),
    dm: (person, text) => void fake.dm(known(person), text),
    group: (person, text, { mention }) => void (mention ? fake.mention(known(person), CHANNEL, text) : fake.channelMessage(known(person), CHANNEL, text)),
    seen: (chatId) => fake.seen(chatId),
    press: (person, chatId, messageId, label) => void fake.press(known(person), chatId, messageId, label),
    notices: (person) => fake.ephemeralsFor(person),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => fake.close(),
    // A top-level DM shows its answer by editing one message: Slack refusing that edit ends it.
    refuseLiveFinish: () => fake.web.refuse('chat.update', 'cant_update_message'),
  };
});
