import '../support/env.js';
import { createTelegramAdapter } from '../../adapters/telegram/telegram-adapter.js';
import { startFakeTelegram } from '../fakes/telegram/index.js';
import { channelContract, type Person } from '../gateway/channel-contract.js';

const GROUP = { id: -1001, type: 'supergroup' as const, title: 'Team' };

channelContract('telegram (grammy against the fake Bot API)', async () => {
  const fake = await startFakeTelegram({ botUsername: 'hob_bot' });
  const adapter = createTelegramAdapter({ token: fake.token, apiRoot: fake.apiRoot, draftIntervalMs: 50, logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  const user = (person: Person) => ({ id: Number(person.id), first_name: person.name });
  const pressedBy = new Map<string, string>();
  return {
    adapter,
    maxLength: 4096,
    groupChatId: String(GROUP.id),
    dmChatId: (person) => person.id,
    dm: (person, text) => void fake.sendText(user(person), { id: Number(person.id), type: 'private' }, text),
    group: (person, text, { mention }) => void fake.sendText(user(person), GROUP, mention ? `@hob_bot ${text}` : text),
    seen: (chatId) =>
      fake.chat(Number(chatId)).filter((message) => !message.deleted).map((message) => ({
        id: String(message.messageId),
        text: message.text,
        buttons: buttonsOf(message.replyMarkup),
      })),
    press: (person, chatId, messageId, label) => {
      const message = fake.chat(Number(chatId)).find((entry) => String(entry.messageId) === messageId);
      const button = buttonsOf(message?.replyMarkup).find((entry) => entry.label === label);
      if (!button) throw new Error(`no button ${label} on message ${messageId}`);
      const chat = Number(chatId) === GROUP.id ? GROUP : { id: Number(chatId), type: 'private' as const };
      pressedBy.set(fake.pressButton(user(person), chat, Number(messageId), button.data), person.id);
    },
    notices: (person) => fake.answeredCallbacks.filter((answer) => pressedBy.get(answer.id) === person.id).map((answer) => answer.text ?? ''),
    waitFor: (probe, what, timeoutMs) => fake.waitFor(probe, timeoutMs ?? 8000, what),
    close: () => fake.close(),
    liveText: (chatId) => fake.draft(Number(chatId))?.text,
  };
});

function buttonsOf(markup: unknown): { label: string; data: string }[] {
  const rows = (markup as { inline_keyboard?: { text: string; callback_data?: string }[][] } | undefined)?.inline_keyboard ?? [];
  return rows.flat().map((button) => ({ label: button.text, data: button.callback_data ?? '' }));
}
