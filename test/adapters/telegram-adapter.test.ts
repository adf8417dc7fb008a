import '../support/env.js';
import { adapter, fake, logs, useTelegramTestbed } from '../support/telegram-testbed.js';
import { describe, expect, it } from 'vitest';
import { TELEGRAM_CAPABILITIES, type TelegramAdapterOptions } from '../../adapters/telegram/telegram-adapter.js';
import type { ButtonPress, InboundMessage, InboundSink } from '../../src/gateway/channel.js';
import { TINY_PNG } from '../fakes/telegram/index.js';

const ann = { id: 42, first_name: 'Ann', last_name: 'Lee', username: 'ann' };
const bob = { id: 43, first_name: 'Bob' };
const annChat = { id: 42, type: 'private' as const };
const team = { id: -1001234567890, type: 'supergroup' as const, title: 'Team' };
const forum = { id: -1009876543210, type: 'supergroup' as const, title: 'Forum', is_forum: true };
const allowedUpdates = ['message', 'edited_message', 'callback_query', 'stopped_message_generation'];

useTelegramTestbed();

function inbox(onMessage: (message: InboundMessage) => void = () => {}) {
  const messages: InboundMessage[] = [];
  const presses: ButtonPress[] = [];
  const sink: InboundSink = {
    message: (message) => {
      onMessage(message);
      messages.push(message);
    },
    button: (press) => void presses.push(press),
  };
  return { messages, presses, sink };
}

async function started(options: Partial<TelegramAdapterOptions> = {}, received = inbox()) {
  const telegram = adapter(options);
  await telegram.start(received.sink);
  return { telegram, ...received };
}

describe('Telegram adapter: what people write reaches the gateway', () => {
  it('delivers a direct message with the chat, the sender and the update id', async () => {
    const { telegram, messages } = await started();
    const messageId = fake.sendText(ann, annChat, 'hello there');

    const message = await fake.waitFor(() => messages[0]);
    expect(message).toEqual({
      platform: 'telegram', chatId: '42', userId: '42', userName: 'Ann Lee', chatType: 'dm', text: 'hello there',
      attachments: [], mentionsBot: false, replyToBot: false, messageId: String(messageId), updateId: String(fake.updates[0]?.update_id),
    });
    expect(telegram.botName).toBe('hob_test_bot');
    expect(fake.callsOf('getUpdates')[0]?.body.allowed_updates).toEqual(allowedUpdates);
  });

  it('marks a group message that mentions the bot and removes the mention from the text', async () => {
    const { messages } = await started();
    fake.sendText(ann, team, 'hey @hob_test_bot what time is it');
    fake.sendText(ann, team, '@HOB_TEST_BOT, ping');
    fake.sendText(ann, team, 'lunch @someone_else?');

    await fake.waitFor(() => messages.length === 3);
    expect(messages.map(({ text, mentionsBot, chatType }) => ({ text, mentionsBot, chatType }))).toEqual([
      { text: 'hey what time is it', mentionsBot: true, chatType: 'group' },
      { text: 'ping', mentionsBot: true, chatType: 'group' },
      { text: 'lunch @someone_else?', mentionsBot: false, chatType: 'group' },
    ]);
  });

  it('shortens /status@botname to /status and never passes on a command for another bot, also as a reply to hob', async () => {
    const { telegram, messages } = await started();
    const hobSaid = await telegram.send({ chatId: String(team.id) }, { text: 'Done.' });
    fake.sendText(ann, team, '/status@other_bot');
    fake.sendText(ann, team, '/permissions@other_bot mode full_auto', { reply_to_message_id: Number(hobSaid.messageId) });
    fake.sendText(ann, team, '/new@other_bot @hob_test_bot', { reply_to_message_id: Number(hobSaid.messageId) });
    fake.sendText(ann, team, '/status@hob_test_bot now');

    await fake.waitFor(() => messages.length >= 1);
    expect(messages.map(({ text, mentionsBot }) => ({ text, mentionsBot }))).toEqual([{ text: '/status now', mentionsBot: true }]);
  });

  it('marks a reply to one of the bot messages, and not a reply to a person', async () => {
    const { telegram, messages } = await started();
    const asked = await telegram.send({ chatId: String(team.id) }, { text: 'Which one?' });
    const bobSaid = fake.sendText(bob, team, 'the red one');
    fake.sendText(ann, team, 'the first', { reply_to_message_id: Number(asked.messageId) });
    fake.sendText(ann, team, 'agreed', { reply_to_message_id: bobSaid });

    await fake.waitFor(() => messages.length === 3);
    expect(messages.map(({ text, replyToBot }) => ({ text, replyToBot }))).toEqual([
      { text: 'the red one', replyToBot: false },
      { text: 'the first', replyToBot: true },
      { text: 'agreed', replyToBot: false },
    ]);
  });

  it('treats a forum topic as a thread and answers inside that topic', async () => {
    const { telegram, messages } = await started();
    fake.sendText(ann, forum, 'in a topic', { message_thread_id: 7, is_topic_message: true });
    fake.sendText(ann, team, 'a reply chain is not a topic', { message_thread_id: 3 });

    await fake.waitFor(() => messages.length === 2);
    expect(messages[0]).toMatchObject({ chatId: String(forum.id), threadId: '7' });
    expect(messages[1]?.threadId).toBeUndefined();

    const ref = await telegram.send({ chatId: String(forum.id), threadId: '7' }, { text: 'here' });
    expect(ref).toMatchObject({ chatId: String(forum.id), threadId: '7' });
    expect(fake.chat(forum.id)).toMatchObject([{ text: 'here', threadId: 7 }]);
  });

  it('offers a photo as an image that is downloaded only when asked, byte for byte', async () => {
    const { messages } = await started();
    fake.sendPhoto(ann, annChat, TINY_PNG, 'my cat');

    const message = await fake.waitFor(() => messages[0]);
    expect(message.text).toBe('my cat');
    expect(message.attachments).toMatchObject([{ kind: 'image', mimeType: 'image/jpeg', sizeBytes: TINY_PNG.length }]);
    expect(fake.callsOf('getFile')).toEqual([]);
    const bytes = await message.attachments[0]?.download();
    expect(bytes?.equals(TINY_PNG)).toBe(true);
  });

  it('offers a document with its file name and type, and a voice note as voice', async () => {
    const { messages } = await started();
    const csv = Buffer.from('a,b\n1,2\n');
    fake.sendDocument(ann, annChat, csv, 'numbers.csv');
    fake.sendVoice(ann, annChat, Buffer.from('OggS fake voice'));

    await fake.waitFor(() => messages.length === 2);
    expect(messages[0]?.attachments).toMatchObject([{ kind: 'document', fileName: 'numbers.csv', mimeType: 'text/csv', sizeBytes: csv.length }]);
    expect((await messages[0]?.attachments[0]?.download())?.toString()).toBe('a,b\n1,2\n');
    expect(messages[1]?.attachments).toMatchObject([{ kind: 'voice', mimeType: 'audio/ogg' }]);
  });

  it('fetches a file again by its ref alone, as after a restart', async () => {
    const { messages, telegram } = await started();
    fake.sendDocument(ann, annChat, Buffer.from('kept across restarts'), 'notes.txt');
    const ref = (await fake.waitFor(() => messages[0]))?.attachments[0]?.ref;
    expect(ref).toEqual(expect.any(String));
    expect((await telegram.download?.(ref ?? ''))?.toString()).toBe('kept across restarts');
  });

  it('delivers an edited message as a new update of the same message', async () => {
    const { messages } = await started();
    const messageId = fake.sendText(ann, annChat, 'remind me at 9');
    await fake.waitFor(() => messages[0]);
    fake.pushUpdate({
      edited_message: {
        message_id: messageId, date: 1, edit_date: 2, chat: { id: 42, type: 'private', first_name: 'Ann' },
        from: { id: 42, is_bot: false, first_name: 'Ann' }, text: 'remind me at 10',
      },
    });

    const edited = await fake.waitFor(() => messages[1]);
    expect(edited).toMatchObject({ text: 'remind me at 10', messageId: String(messageId) });
    expect(edited.updateId).not.toBe(messages[0]?.updateId);
  });

  it('keeps polling after the gateway throws on one message, and logs the failure', async () => {
    const received = inbox((message) => {
      if (message.text === 'boom') throw new Error('sink exploded');
    });
    await started({}, received);
    fake.sendText(ann, annChat, 'boom');
    await fake.waitFor(() => logs.some((entry) => entry.message === 'telegram update handler failed'));
    fake.sendText(ann, annChat, 'still there?');

    await fake.waitFor(() => received.messages.length === 1);
    expect(received.messages[0]?.text).toBe('still there?');
  });

  it('polls again after Telegram ends polling with a conflict', async () => {
    fake.failNext('getUpdates', { code: 409, description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running' });
    const { telegram, messages } = await started({ pollRestartDelayMs: 10 });
    fake.sendText(ann, annChat, 'anyone home?');

    await fake.waitFor(() => messages[0]);
    // Polling again, the channel is up again for /healthz.
    expect(telegram.down).toBeUndefined();
    // A 409 is another poller of the same bot: the log names it and the fix (issue 23).
    expect(logs).toContainEqual(expect.objectContaining({ level: 'error', message: expect.stringMatching(/^Telegram cut off this long poll \(409 Conflict\).*webhook mode/), fields: expect.objectContaining({ restartInMs: 10 }) }));
  });

  it('does not hand over a message again after a stop and a new start', async () => {
    const first = await started();
    fake.sendText(ann, annChat, 'one');
    await fake.waitFor(() => first.messages[0]);
    await first.telegram.stop();

    const second = await started();
    fake.sendText(ann, annChat, 'two');
    await fake.waitFor(() => second.messages[0]);
    expect(second.messages.map((message) => message.text)).toEqual(['two']);
  });
});

describe('Telegram adapter: buttons', () => {
  const approval = { text: 'Run `ls`?', buttons: [[{ label: 'Allow', data: 'a:1' }, { label: 'Deny', data: 'd:1' }]] };

  it('hands a button press to the gateway and shows its answer to the presser exactly once', async () => {
    const { telegram, presses } = await started();
    const sent = await telegram.send({ chatId: '42' }, approval);
    expect(fake.chat(42)[0]?.replyMarkup).toEqual({
      inline_keyboard: [[{ text: 'Allow', callback_data: 'a:1' }, { text: 'Deny', callback_data: 'd:1' }]],
    });
    const queryId = fake.pressButton(ann, annChat, Number(sent.messageId), 'a:1');

    const press = await fake.waitFor(() => presses[0]);
    expect(press).toMatchObject({ platform: 'telegram', chatId: '42', userId: '42', userName: 'Ann Lee', data: 'a:1', messageRef: { chatId: '42', messageId: sent.messageId } });
    await press.answer('Allowed');
    await press.answer('Allowed again');
    expect(fake.answeredCallbacks).toEqual([{ id: queryId, text: 'Allowed' }]);
  });

  it('stops the button spinner when the gateway never answers', async () => {
    const { telegram, presses } = await started({ callbackAnswerTimeoutMs: 30 });
    const sent = await telegram.send({ chatId: '42' }, approval);
    const queryId = fake.pressButton(ann, annChat, Number(sent.messageId), 'd:1');

    await fake.waitFor(() => fake.answeredCallbacks.length === 1);
    expect(fake.answeredCallbacks).toEqual([{ id: queryId }]);
    await presses[0]?.answer('too late');
    expect(fake.answeredCallbacks).toHaveLength(1);
  });
});

describe('Telegram adapter: what people read', () => {
  it('renders **bold** Markdown as bold text', async () => {
    await adapter().send({ chatId: '42' }, { text: 'This is **bold**.' });
    expect(fake.chat(42)).toMatchObject([{ text: 'This is bold.', parseMode: 'HTML', entities: [{ type: 'bold', offset: 8, length: 4 }] }]);
  });

  it('resends as plain text, once, when Telegram cannot parse the HTML', async () => {
    fake.failNext('sendMessage', { code: 400, description: 'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 0' });
    const ref = await adapter().send({ chatId: '42' }, { text: 'Use **care** here' });

    expect(fake.chat(42)).toMatchObject([{ messageId: Number(ref.messageId), text: 'Use care here', entities: [] }]);
    expect(fake.chat(42)[0]?.parseMode).toBeUndefined();
    expect(fake.callsOf('sendMessage')).toHaveLength(2);
  });

  it('sends plain messages without any markup', async () => {
    await adapter().send({ chatId: '42' }, { text: '**as typed** <b>', plain: true });
    expect(fake.chat(42)).toMatchObject([{ text: '**as typed** <b>', entities: [] }]);
    expect(fake.callsOf('sendMessage')[0]?.body.parse_mode).toBeUndefined();
  });

  it('waits out a 429 and delivers the message once', async () => {
    fake.failNext('sendMessage', { retryAfter: 1 });
    await adapter().send({ chatId: '42' }, { text: 'after the rate limit' });

    expect(fake.callsOf('sendMessage').map((call) => call.response?.status)).toEqual([429, 200]);
    expect(fake.chat(42).map((message) => message.text)).toEqual(['after the rate limit']);
  });

  it('rejects a send whose connection dropped instead of retrying it unseen', async () => {
    fake.failNext('sendMessage', { disconnect: true });
    await expect(adapter().send({ chatId: '42' }, { text: 'lost' })).rejects.toThrow();
    expect(fake.chat(42)).toEqual([]);
  });

  it('splits a long answer into messages of at most 4096 characters with the buttons on the last', async () => {
    const text = Array.from({ length: 100 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(9).trim()}`).join('\n\n');
    expect(text.length).toBeGreaterThan(5000);
    const ref = await adapter().send({ chatId: '42' }, { text, buttons: [[{ label: 'More', data: 'more' }]] });

    const shown = fake.chat(42);
    expect(shown.length).toBeGreaterThan(1);
    for (const message of shown) expect(message.text.length).toBeLessThanOrEqual(4096);
    expect(shown.map((message) => message.replyMarkup !== undefined)).toEqual(shown.map((_, i) => i === shown.length - 1));
    expect(ref.messageId).toBe(String(shown.at(-1)?.messageId));
    expect(shown.map((message) => message.text).join('\n\n')).toBe(text.trim());
  });

  it('reports each part of a split message as it lands, so a kill between parts resends only the rest', async () => {
    const text = Array.from({ length: 200 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(9).trim()}`).join('\n\n');
    const reported: { parts: number; inChat: number }[] = [];
    await adapter().send({ chatId: '42' }, { text }, { onPartSent: (parts) => reported.push({ parts, inChat: fake.chat(42).length }) });
    const total = fake.chat(42).length;
    expect(total).toBeGreaterThan(2);
    // Told after every part but the last, each time with that part already in the chat.
    expect(reported).toEqual(Array.from({ length: total }, (_, i) => ({ parts: i + 1, inChat: i + 1 })));

    const withFile: number[] = [];
    await adapter().send({ chatId: '43' }, { text: 'Long explanation. '.repeat(100), file: { name: 'r.md', data: Buffer.from('# R') } }, { onPartSent: (parts) => withFile.push(parts) });
    expect(withFile).toEqual([1, 2]); // the text ahead of the file, then the file (the last part)
  });

  it('edits the text a person reads, drops buttons not given again, and accepts an unchanged edit', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Thinking…', buttons: [[{ label: 'Stop', data: 'stop' }]] });
    await telegram.edit(ref, { text: 'Done: **3** files' });
    expect(fake.chat(42)).toMatchObject([{ text: 'Done: 3 files', edits: 1 }]);
    expect(fake.chat(42)[0]?.replyMarkup).toBeUndefined();

    await expect(telegram.edit(ref, { text: 'Done: **3** files' })).resolves.toBeUndefined();
    await expect(telegram.edit({ chatId: '42', messageId: '999' }, { text: 'x' })).rejects.toThrow(/message to edit not found/);
  });

  it('edits a message to a text too long for one message as its head, marked with …', async () => {
    const telegram = adapter();
    const ref = await telegram.send({ chatId: '42' }, { text: 'Working…' });
    const text = Array.from({ length: 100 }, (_, i) => `Step ${i}: **done** ${'and then '.repeat(6).trim()}`).join('\n');
    await telegram.edit(ref, { text });

    const [shown] = fake.chat(42);
    expect(shown?.text.length).toBeLessThanOrEqual(4096);
    expect(shown?.text.startsWith('Step 0: done and then')).toBe(true);
    expect(shown?.text.endsWith('…')).toBe(true);
  });

  it('sends a file as a document with its name and the text as caption', async () => {
    const ref = await adapter().send({ chatId: '42' }, {
      text: 'The **full** command is attached.',
      file: { name: 'command.txt', data: Buffer.from('rm -rf /tmp/build') },
      buttons: [[{ label: 'Allow', data: 'a:2' }]],
    });
    expect(fake.callsOf('sendDocument')[0]?.files).toMatchObject([{ fileName: 'command.txt' }]);
    expect(fake.chat(42)).toMatchObject([{ messageId: Number(ref.messageId), kind: 'document', text: 'The full command is attached.' }]);
    expect(fake.chat(42)[0]?.file?.bytes.toString()).toBe('rm -rf /tmp/build');
    expect(fake.chat(42)[0]?.replyMarkup).toBeDefined();
  });

  it('sends a text too long for a caption first, then the file', async () => {
    const text = 'Long explanation. '.repeat(100);
    const ref = await adapter().send({ chatId: '42' }, { text, file: { name: 'report.md', data: Buffer.from('# Report'), caption: 'The report' } });

    const shown = fake.chat(42);
    expect(shown.map((message) => message.kind)).toEqual(['text', 'document']);
    expect(shown[0]?.text).toBe(text.trim());
    expect(shown[1]).toMatchObject({ messageId: Number(ref.messageId), text: 'The report' });
  });

  it('shows typing in the right topic and never fails when Telegram refuses it', async () => {
    const telegram = adapter();
    await telegram.typing({ chatId: String(forum.id), threadId: '7' });
    expect(fake.callsOf('sendChatAction')[0]?.body).toEqual({ chat_id: forum.id, action: 'typing', message_thread_id: 7 });

    fake.failNext('sendChatAction', { code: 400, description: 'Bad Request: chat not found' });
    await expect(telegram.typing({ chatId: '42' })).resolves.toBeUndefined();
  });

  it('registers slash commands, names the DM target and states its limits', async () => {
    const telegram = adapter();
    await telegram.setCommands?.([{ command: '/status', description: 'Show what hob is doing' }]);
    expect(fake.callsOf('setMyCommands')[0]?.body.commands).toEqual([{ command: 'status', description: 'Show what hob is doing' }]);
    expect(await telegram.directTarget?.('42')).toEqual({ chatId: '42' });
    expect(telegram.capabilities).toEqual(TELEGRAM_CAPABILITIES);
    expect(telegram.capabilities).toMatchObject({ maxMessageLength: 4096, buttons: true, edits: true, files: true, editIntervalMs: 1000, groupEditIntervalMs: 3000 });
  });
});

describe('Telegram adapter: webhook mode', () => {
  const webhook = { url: 'https://hob.example.com/telegram', secretToken: 'right-secret_1', port: 0, host: '127.0.0.1' };
  const update = {
    update_id: 500,
    message: { message_id: 9, date: 1, chat: { id: 42, type: 'private', first_name: 'Ann' }, from: { id: 42, is_bot: false, first_name: 'Ann' }, text: 'via webhook' },
  };
  const post = (port: number, secret: string | undefined) =>
    fetch(`http://127.0.0.1:${port}/telegram`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret !== undefined ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
      body: JSON.stringify(update),
    });

  it('registers the webhook with its secret and handles only requests that carry it', async () => {
    const { telegram, messages } = await started({ webhook });
    expect(fake.callsOf('setWebhook')[0]?.body).toMatchObject({ url: webhook.url, secret_token: webhook.secretToken, allowed_updates: allowedUpdates });
    const port = telegram.webhookAddress?.port ?? 0;

    expect((await post(port, 'wrong-secret')).status).toBe(401);
    expect((await post(port, undefined)).status).toBe(401);
    expect(messages).toEqual([]);

    expect((await post(port, webhook.secretToken)).status).toBe(200);
    expect(messages).toMatchObject([{ text: 'via webhook', chatId: '42', updateId: '500' }]);
    expect(fake.callsOf('getUpdates')).toEqual([]);
  });
});
