import '../support/env.js';
import { adapter, fake, logs, useTelegramTestbed } from '../support/telegram-testbed.js';
import { beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage, InboundSink } from '../../src/gateway/channel.js';
import { TINY_PNG, type Json } from '../fakes/telegram/index.js';

/**
 * What the gateway learns about a message beyond its text (an edit, an album, content hob
 * cannot read), what Telegram receives when hob answers a particular message, and the
 * command menus owners and everyone else see.
 */

const ann = { id: 42, first_name: 'Ann', last_name: 'Lee', username: 'ann' };
const bob = { id: 43, first_name: 'Bob' };
const annChat = { id: 42, type: 'private' as const };
const bobChat = { id: 43, type: 'private' as const };
const team = { id: -1001234567890, type: 'supergroup' as const, title: 'Team' };

/** The fake's clock: message dates and edit dates come from it, never from the wall clock. */
let now = Date.UTC(2030, 0, 15, 9, 0, 0);
useTelegramTestbed(() => ({ botUsername: 'hob_test_bot', clock: () => now }));

async function started() {
  const messages: InboundMessage[] = [];
  const sink: InboundSink = { message: (message) => void messages.push(message), button: () => {} };
  const telegram = adapter();
  await telegram.start(sink);
  return { telegram, messages };
}

/**
 * Waits until the adapter has fetched every update injected so far, then sends a marker text
 * and waits for it: whatever those earlier updates produced has reached the sink by then.
 */
async function afterEverythingSoFar(messages: InboundMessage[]): Promise<InboundMessage[]> {
  const lastId = fake.updates.at(-1)?.update_id;
  await fake.waitForCall('getUpdates', (call) => Array.isArray(call.response?.result) && (call.response.result as Json[]).some((update) => update.update_id === lastId));
  fake.sendText(ann, annChat, 'marker');
  await fake.waitFor(() => messages.some((message) => message.text === 'marker'), 5000, 'the marker message');
  return messages.filter((message) => message.text !== 'marker');
}

function mediaGroupIdOf(updateIndex: number): unknown {
  return (fake.updates[updateIndex]?.message as Json | undefined)?.media_group_id;
}

beforeEach(() => {
  now = Date.UTC(2030, 0, 15, 9, 0, 0);
});

describe('Telegram adapter: edits and albums', () => {
  it('tells how long after sending a person edited a message', async () => {
    const { messages } = await started();
    const messageId = fake.sendText(ann, annChat, 'remind me at 9');
    const original = await fake.waitFor(() => messages[0]);
    now += 95_000;
    fake.editText(ann, annChat, messageId, 'remind me at 10');

    const edited = await fake.waitFor(() => messages[1]);
    expect(edited).toMatchObject({ text: 'remind me at 10', messageId: String(messageId), editedAfterSeconds: 95 });
    expect(original.editedAfterSeconds).toBeUndefined();
    const update = fake.updates[1]?.edited_message as Json;
    expect(edited.editedAfterSeconds).toBe((update.edit_date as number) - (update.date as number));
  });

  it('never answers the edits of a live location, even in a DM', async () => {
    const { messages } = await started();
    const messageId = fake.sendLocation(ann, annChat, 52.52, 13.4);
    await fake.waitFor(() => messages[0]);
    now += 30_000;
    fake.pushUpdate({
      edited_message: {
        message_id: messageId, date: Math.floor(now / 1000) - 30, edit_date: Math.floor(now / 1000),
        chat: { id: 42, type: 'private', first_name: 'Ann' }, from: { id: 42, is_bot: false, first_name: 'Ann' },
        location: { latitude: 52.53, longitude: 13.41, live_period: 900 },
      },
    });

    expect(await afterEverythingSoFar(messages)).toMatchObject([{ unsupported: 'location' }]);
    expect(messages.filter((message) => message.editedAfterSeconds !== undefined)).toEqual([]);
  });

  it('gives both photos of an album one batch key, each with its own image', async () => {
    const { messages } = await started();
    const second = Buffer.concat([TINY_PNG, Buffer.from('second photo')]);
    const ids = fake.sendAlbum(ann, annChat, [TINY_PNG, second], 'our trip');
    fake.sendPhoto(ann, annChat, TINY_PNG, 'on its own');

    await fake.waitFor(() => messages.length === 3);
    const [first, next, alone] = messages;
    expect(first).toMatchObject({ messageId: String(ids[0]), text: 'our trip', batchKey: `42:${String(mediaGroupIdOf(0))}` });
    expect(next).toMatchObject({ messageId: String(ids[1]), text: '', batchKey: first?.batchKey });
    expect(first?.attachments).toMatchObject([{ kind: 'image' }]);
    expect(next?.attachments).toMatchObject([{ kind: 'image' }]);
    expect((await first?.attachments[0]?.download())?.equals(TINY_PNG)).toBe(true);
    expect((await next?.attachments[0]?.download())?.equals(second)).toBe(true);
    expect(alone?.batchKey).toBeUndefined();
  });

  it('keeps albums of different chats apart', async () => {
    const { messages } = await started();
    fake.sendAlbum(ann, annChat, [TINY_PNG, TINY_PNG]);
    fake.sendAlbum(bob, team, [TINY_PNG, TINY_PNG], '@hob_test_bot look');

    await fake.waitFor(() => messages.length === 4);
    const keys = messages.map((message) => message.batchKey);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).toBe(keys[3]);
    expect(keys[0]?.startsWith('42:')).toBe(true);
    expect(keys[2]?.startsWith(`${team.id}:`)).toBe(true);
  });
});

describe('Telegram adapter: what hob cannot read', () => {
  it('hands over a sticker, a location or a contact in a DM as unsupported, with no text', async () => {
    const { messages } = await started();
    fake.sendSticker(ann, annChat, '😂');
    fake.sendLocation(ann, annChat, 48.85, 2.35);
    fake.sendRaw(ann, annChat, { contact: { phone_number: '+15550100', first_name: 'Cleo' } });
    fake.sendRaw(ann, annChat, { venue: { location: { latitude: 48.86, longitude: 2.34 }, title: 'Louvre', address: 'Rue de Rivoli' }, location: { latitude: 48.86, longitude: 2.34 } });

    await fake.waitFor(() => messages.length === 4);
    expect(messages.map(({ text, attachments, unsupported, chatType }) => ({ text, attachments, unsupported, chatType }))).toEqual([
      { text: '', attachments: [], unsupported: 'sticker', chatType: 'dm' },
      { text: '', attachments: [], unsupported: 'location', chatType: 'dm' },
      { text: '', attachments: [], unsupported: 'contact', chatType: 'dm' },
      { text: '', attachments: [], unsupported: 'venue', chatType: 'dm' },
    ]);
    expect(messages[0]).toMatchObject({ chatId: '42', userId: '42', userName: 'Ann Lee' });
  });

  it('in a group hands over a sticker only when it replies to the bot', async () => {
    const { telegram, messages } = await started();
    const asked = await telegram.send({ chatId: String(team.id) }, { text: 'How was the demo?' });
    const bobSaid = fake.sendText(bob, team, 'lunch?');
    fake.sendSticker(ann, team, '👍');
    fake.sendSticker(ann, team, '🍕', { reply_to_message_id: bobSaid });
    fake.sendSticker(ann, team, '🎉', { reply_to_message_id: Number(asked.messageId) });

    const delivered = await afterEverythingSoFar(messages);
    expect(delivered.map(({ text, unsupported, replyToBot }) => ({ text, unsupported, replyToBot }))).toEqual([
      { text: 'lunch?', unsupported: undefined, replyToBot: false },
      { text: '', unsupported: 'sticker', replyToBot: true },
    ]);
  });

  it('hands over neither service messages nor the bot’s own messages', async () => {
    const { messages } = await started();
    fake.addMembers(bob, team, [bob]);
    fake.addMembers(ann, team, [{ id: 44, first_name: 'Cleo' }]);
    fake.sendRaw(ann, annChat, { pinned_message: { message_id: 1, date: 0, chat: { id: 42, type: 'private', first_name: 'Ann' } } });
    fake.pushUpdate({
      message: {
        message_id: 99, date: Math.floor(now / 1000), chat: { id: 42, type: 'private', first_name: 'Ann' },
        from: { id: fake.botId, is_bot: true, first_name: 'hob', username: fake.botUsername }, sticker: { file_id: 'x', file_unique_id: 'y', type: 'regular', width: 1, height: 1, is_animated: false, is_video: false },
      },
    });

    expect(await afterEverythingSoFar(messages)).toEqual([]);
  });
});

describe('Telegram adapter: answering a particular message', () => {
  it('shows the answer as a reply to the message it answers', async () => {
    const telegram = adapter();
    const question = fake.sendText(ann, team, '@hob_test_bot what is on today?');
    await telegram.send({ chatId: String(team.id) }, { text: 'Two meetings.', replyTo: String(question) });

    expect(fake.chat(team.id)).toMatchObject([{ text: 'Two meetings.', replyToMessageId: question }]);
    expect(fake.callsOf('sendMessage')[0]?.body.reply_parameters).toEqual({ message_id: question, allow_sending_without_reply: true });
  });

  it('replies with the first part of a long answer only, also when a retry sends the rest', async () => {
    const telegram = adapter();
    const question = fake.sendText(ann, team, '@hob_test_bot tell me everything');
    const text = Array.from({ length: 100 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(9).trim()}`).join('\n\n');
    await telegram.send({ chatId: String(team.id) }, { text, replyTo: String(question) });

    const shown = fake.chat(team.id);
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.map((message) => message.replyToMessageId)).toEqual(shown.map((_, i) => (i === 0 ? question : undefined)));

    const before = shown.length;
    await telegram.send({ chatId: String(team.id) }, { text, replyTo: String(question) }, { skipParts: 1 });
    expect(fake.chat(team.id).slice(before).map((message) => message.replyToMessageId)).toEqual(shown.slice(1).map(() => undefined));
  });

  it('sends a file as a reply, or the text ahead of it when the text is too long for a caption', async () => {
    const telegram = adapter();
    const question = fake.sendText(ann, annChat, 'send me the log');
    await telegram.send({ chatId: '42' }, { text: 'Here it is.', file: { name: 'log.txt', data: Buffer.from('ok') }, replyTo: String(question) });
    await telegram.send({ chatId: '42' }, { text: 'Long explanation. '.repeat(100), file: { name: 'log.txt', data: Buffer.from('ok') }, replyTo: String(question) });

    expect(fake.chat(42).map(({ kind, replyToMessageId }) => ({ kind, replyToMessageId }))).toEqual([
      { kind: 'document', replyToMessageId: question },
      { kind: 'text', replyToMessageId: question },
      { kind: 'document', replyToMessageId: undefined },
    ]);
  });

  it('still answers when the message it answers was deleted', async () => {
    await adapter().send({ chatId: '42' }, { text: 'Done.', replyTo: '777' });
    expect(fake.chat(42)).toMatchObject([{ text: 'Done.' }]);
    expect(fake.chat(42)[0]?.replyToMessageId).toBeUndefined();
  });
});

describe('Telegram adapter: command menus', () => {
  const everyone = [{ command: '/status', description: 'Show what hob is doing' }];
  const ownerOnly = [...everyone, { command: '/restart', description: 'Restart hob' }];
  const names = (commands: Json[]) => commands.map((command) => command.command);

  it('shows owner commands in the owners’ DMs only', async () => {
    fake.sendText(ann, annChat, 'hi');
    fake.sendText(bob, bobChat, 'hi');
    await adapter().setCommands?.(everyone, { userIds: ['42'], commands: ownerOnly });

    expect(names(fake.commandsFor())).toEqual(['status']);
    expect(names(fake.commandMenu(42))).toEqual(['status', 'restart']);
    expect(names(fake.commandMenu(43))).toEqual(['status']);
    expect(names(fake.commandMenu(team.id))).toEqual(['status']);
    expect(fake.callsOf('setMyCommands').map((call) => call.body.scope)).toEqual([undefined, { type: 'chat', chat_id: 42 }]);
  });

  it('sets the other owners’ menus when one owner never opened a DM with the bot', async () => {
    fake.sendText(ann, annChat, 'hi');
    fake.sendText(bob, bobChat, 'hi');
    await expect(adapter().setCommands?.(everyone, { userIds: ['7', '42', '43'], commands: ownerOnly })).resolves.toBeUndefined();

    expect(names(fake.commandMenu(42))).toEqual(['status', 'restart']);
    expect(names(fake.commandMenu(43))).toEqual(['status', 'restart']);
    expect(fake.callsOf('setMyCommands').map((call) => call.response?.status)).toEqual([200, 400, 200, 200]);
    expect(logs).toContainEqual({
      level: 'warn',
      fields: { method: 'setMyCommands', userId: '7', errorCode: 400, description: 'Bad Request: chat not found' },
      message: 'telegram could not set the owner commands',
    });
  });

  it('fails when the menu for everyone cannot be set', async () => {
    fake.failNext('setMyCommands', { code: 400, description: 'Bad Request: BOT_COMMAND_INVALID' });
    await expect(adapter().setCommands?.(everyone)).rejects.toThrow(/BOT_COMMAND_INVALID/);
    expect(fake.commandsFor()).toEqual([]);
  });
});

describe('Telegram adapter: limits', () => {
  it('edits group messages at most every 3 s and DM messages every second', () => {
    expect(adapter().capabilities).toMatchObject({ editIntervalMs: 1000, groupEditIntervalMs: 3000 });
  });
});
